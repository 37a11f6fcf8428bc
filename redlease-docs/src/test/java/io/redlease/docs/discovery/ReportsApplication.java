package io.redlease.docs.discovery;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The forwarding example of docs/operating.md: a web application whose writes the leader makes. */
@SpringBootApplication
class ReportsApplication {}
