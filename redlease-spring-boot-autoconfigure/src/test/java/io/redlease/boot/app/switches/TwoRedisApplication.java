package io.redlease.boot.app.switches;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.scheduling.annotation.EnableScheduling;

/** The Quick start application with two Redis connection factories, neither of them primary. */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@Import(ReportJob.class)
class TwoRedisApplication {

    @Bean
    LettuceConnectionFactory first(@Value("${test.redis.port}") int port) {
        return new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
    }

    @Bean
    LettuceConnectionFactory second(@Value("${test.redis.port}") int port) {
        return new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
    }
}
