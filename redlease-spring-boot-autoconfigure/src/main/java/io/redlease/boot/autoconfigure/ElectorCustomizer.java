package io.redlease.boot.autoconfigure;

import io.redlease.core.ElectorConfig;

/**
 * Customizes the configuration of each elector the auto-configuration creates, for example to add
 * an {@link io.redlease.core.Observer}. Customizers run in {@link
 * org.springframework.core.annotation.Order order}, after the properties were applied.
 */
@FunctionalInterface
public interface ElectorCustomizer {

    /**
     * Customizes one election's configuration.
     *
     * @param electionId the election id ({@value io.redlease.core.Elections#DEFAULT} for the main
     *     election)
     * @param builder the configuration, with the properties applied
     */
    void customize(String electionId, ElectorConfig.Builder builder);
}
