package io.redlease.docs.partitions;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The partitioned job example of docs/partitions.md. */
@SpringBootApplication
@EnableScheduling
class PartitionsApplication {}
