package io.redlease.samples.jdbc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The leader keeps a row in PostgreSQL up to date. Redis cannot check writes to another store, so
 * the term's token is checked by the database itself, in the same statement as the write.
 */
@SpringBootApplication
@EnableScheduling
public class JdbcFencingApplication {

    public static void main(String[] args) {
        SpringApplication.run(JdbcFencingApplication.class, args);
    }
}
