package io.redlease.docs.reactive;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The reactive examples of docs/reactive-and-async.md. */
@SpringBootApplication
@EnableScheduling
class ReactiveApplication {}
