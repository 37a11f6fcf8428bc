package io.redlease.samples.reactive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Reactive leader-only work on WebFlux: a once-per-slot report built in a Reactor pipeline and
 * written through the reactive fence ({@link SlotReport}), and an endpoint that only the leader
 * answers ({@link LeaderWork}). {@code spring.reactor.context-propagation=auto} carries the term
 * and the slot into every operator.
 */
@SpringBootApplication
@EnableScheduling
public class ReactiveJobApplication {

    public static void main(String[] args) {
        SpringApplication.run(ReactiveJobApplication.class, args);
    }
}
