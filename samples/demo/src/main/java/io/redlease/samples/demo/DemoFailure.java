package io.redlease.samples.demo;

/** The demo could not tell its story. */
final class DemoFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    DemoFailure(String message) {
        super(message);
    }
}
