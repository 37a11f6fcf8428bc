package io.redlease.samples.demo;

import java.util.ArrayList;
import java.util.List;

/** The claims a chapter checks about its own story, and its verdict. */
final class SelfCheck {

    private final List<String> failures = new ArrayList<>();

    /** Records the claim as failed unless the condition holds. */
    void check(boolean condition, String claim) {
        if (!condition) {
            failures.add(claim);
        }
    }

    /** Prints the verdict (the summary when every claim held) and returns the exit status. */
    int report(String passed) {
        System.out.println();
        if (failures.isEmpty()) {
            System.out.println("Self-check PASSED: " + passed);
            return 0;
        }
        failures.forEach(failure -> System.out.println("Self-check FAILED: " + failure));
        return 1;
    }
}
