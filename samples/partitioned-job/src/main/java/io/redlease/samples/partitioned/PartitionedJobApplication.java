package io.redlease.samples.partitioned;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Syncs tenants, split into partitions spread over every running copy: each partition is synced by
 * the one instance that owns it, and moves when instances join, leave or crash. Run several copies
 * with the same {@code redlease.name} and watch {@code /actuator/redlease/partitions/tenants}.
 */
@SpringBootApplication
@EnableScheduling
public class PartitionedJobApplication {

    public static void main(String[] args) {
        SpringApplication.run(PartitionedJobApplication.class, args);
    }
}
