package io.redlease.boot.app.switches;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The README's Quick start application: one leader-only scheduled job writing through the fence.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@Import(ReportJob.class)
class QuickStartApplication {}
