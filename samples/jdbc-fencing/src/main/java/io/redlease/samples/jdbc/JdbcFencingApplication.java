package io.redlease.samples.jdbc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The leader settles credits into two PostgreSQL tables through JPA. Redis cannot check writes to
 * another store, so each transaction is fenced by the database itself: redlease-jdbc stamps the
 * term's token into the fence table at commit, and a stale term's transaction is rolled back.
 */
@SpringBootApplication
@EnableScheduling
public class JdbcFencingApplication {

    public static void main(String[] args) {
        SpringApplication.run(JdbcFencingApplication.class, args);
    }
}
