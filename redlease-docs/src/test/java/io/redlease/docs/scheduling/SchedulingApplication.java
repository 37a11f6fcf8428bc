package io.redlease.docs.scheduling;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The once-per-slot example of docs/scheduled-jobs.md. */
@SpringBootApplication
@EnableScheduling
class SchedulingApplication {}
