package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.RedleaseProperties.Election;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.InvalidElectorConfigException;
import io.redlease.core.InvalidElectorConfigException.Setting;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Builds the electors of the configured elections from {@link RedleaseProperties}: one String
 * template over the application's connection factory, the properties (an extra election inherits
 * what it does not set), then the customizers. Broken rules are reported against the property that
 * set the value.
 */
final class ElectorFactory implements DisposableBean {

    private final RedleaseProperties properties;

    private final ObjectProvider<RedisConnectionFactory> connectionFactory;

    private final List<ElectorCustomizer> customizers;

    private final Duration shutdownPhaseTimeout;

    private final @Nullable Executor callbackExecutor;

    private final @Nullable AutoCloseable ownCallbackExecutor;

    private @Nullable StringRedisTemplate template;

    /**
     * Creates the factory.
     *
     * @param shutdownPhaseTimeout {@code spring.lifecycle.timeout-per-shutdown-phase}: stopping an
     *     elector drains its calls for this long, less the time its release may take
     * @param callbackExecutor the executor for observer callbacks and leadership events, or null
     *     for the engine's default
     * @param ownCallbackExecutor that executor when redlease made it, to close with the context
     */
    ElectorFactory(
            RedleaseProperties properties,
            ObjectProvider<RedisConnectionFactory> connectionFactory,
            List<ElectorCustomizer> customizers,
            Duration shutdownPhaseTimeout,
            @Nullable Executor callbackExecutor,
            @Nullable AutoCloseable ownCallbackExecutor) {
        this.properties = properties;
        this.connectionFactory = connectionFactory;
        this.customizers = customizers;
        this.shutdownPhaseTimeout = shutdownPhaseTimeout;
        this.callbackExecutor = callbackExecutor;
        this.ownCallbackExecutor = ownCallbackExecutor;
    }

    /**
     * Closes the callback executor redlease made, once the electors are destroyed, with the
     * termination settings Boot's builder gave it ({@code spring.task.execution.shutdown.*}).
     */
    @Override
    public void destroy() throws Exception {
        if (ownCallbackExecutor != null) {
            ownCallbackExecutor.close();
        }
    }

    /** Creates the elector of an election id ({@value Elections#DEFAULT} or a configured one). */
    Elector create(String id) {
        ElectorConfig config = config(id);
        try {
            return new Elector(template(), config);
        } catch (InvalidElectorConfigException ex) {
            throw invalid(id, ex);
        }
    }

    /** Whether the election starts with the application. */
    boolean autoStartup(String id) {
        Election election = properties.getElections().get(id);
        Boolean own = election == null ? null : election.getAutoStartup();
        return own != null ? own : properties.isAutoStartup();
    }

    ElectorConfig config(String id) {
        Election election = Elections.DEFAULT.equals(id) ? null : properties.getElections().get(id);
        String name = election == null ? properties.getName() : election.getName();
        if (name == null || name.isBlank()) {
            throw new InvalidRedleasePropertyException(
                    property(id, "name", true),
                    name,
                    "the election name must be set: every instance that contends for the election"
                            + " uses the same name, and the Redis keys derive from it",
                    "Set "
                            + property(id, "name", true)
                            + " (for example to the application's name); on Redis Cluster put"
                            + " it in a hash tag, such as {report-builder}.",
                    null);
        }
        ElectorConfig.Builder builder =
                ElectorConfig.builder(name)
                        .ttl(pick(election == null ? null : election.getTtl(), properties.getTtl()))
                        .leaseAwareScheduling(properties.isLeaseAwareScheduling())
                        .releaseNotifications(properties.isReleaseNotifications());
        Duration renew =
                pick(
                        election == null ? null : election.getRenewInterval(),
                        properties.getRenewInterval());
        if (renew != null) {
            builder.renewInterval(renew);
        }
        Duration acquire =
                pick(
                        election == null ? null : election.getAcquireInterval(),
                        properties.getAcquireInterval());
        if (acquire != null) {
            builder.acquireInterval(acquire);
        }
        String instanceId =
                pick(
                        election == null ? null : election.getInstanceId(),
                        properties.getInstanceId());
        if (instanceId != null && !instanceId.isBlank()) {
            builder.instanceId(instanceId);
        }
        builder.drainTimeout(drainTimeout(election));
        if (callbackExecutor != null) {
            builder.callbackExecutor(callbackExecutor);
        }
        RedleaseProperties.ReplicaAcknowledgement ack = properties.getReplicaAcknowledgement();
        try {
            builder.connectTimeout(properties.getConnectTimeout());
            if (ack.getReplicas() != 0) {
                builder.replicaAcknowledgement(ack.getReplicas(), ack.getTimeout());
            }
            builder.fencedKeyPrefixes(fencedKeyPrefixes(election).toArray(String[]::new));
            for (ElectorCustomizer customizer : customizers) {
                customizer.customize(id, builder);
            }
            return builder.build();
        } catch (InvalidElectorConfigException ex) {
            throw invalid(id, ex);
        }
    }

    /** Returns an election's own fenced key prefixes: the main one's are not inherited. */
    private List<String> fencedKeyPrefixes(@Nullable Election election) {
        return election == null
                ? properties.getFencedKeyPrefixes()
                : election.getFencedKeyPrefixes();
    }

    /**
     * Returns the drain timeout that keeps a stop within the shutdown phase: the phase timeout less
     * the release's own bound (one renew interval), but at least half the phase.
     */
    private Duration drainTimeout(@Nullable Election election) {
        return drainTimeout(
                pick(election == null ? null : election.getTtl(), properties.getTtl()),
                pick(
                        election == null ? null : election.getRenewInterval(),
                        properties.getRenewInterval()));
    }

    /** Returns the drain timeout for an election with these timings (null: the default). */
    Duration drainTimeout(@Nullable Duration ttl, @Nullable Duration renewInterval) {
        Duration renew = renewInterval;
        if (renew == null || renew.isZero() || renew.isNegative()) {
            renew = (ttl == null || ttl.isZero() ? ElectorConfig.DEFAULT_TTL : ttl).dividedBy(3);
        }
        Duration half = shutdownPhaseTimeout.dividedBy(2);
        Duration release = renew.compareTo(half) < 0 ? renew : half;
        Duration drain = shutdownPhaseTimeout.minus(release);
        return drain.isNegative() ? Duration.ZERO : drain;
    }

    /** Returns {@code spring.lifecycle.timeout-per-shutdown-phase}. */
    Duration phaseTimeout() {
        return shutdownPhaseTimeout;
    }

    /** Returns the executor for observer callbacks and events, or null for the engine's. */
    @Nullable Executor callbackExecutor() {
        return callbackExecutor;
    }

    private StringRedisTemplate template() {
        StringRedisTemplate current = template;
        if (current == null) {
            current = new StringRedisTemplate(connectionFactory.getObject());
            current.afterPropertiesSet();
            template = current;
        }
        return current;
    }

    private static <T> @Nullable T pick(@Nullable T own, @Nullable T inherited) {
        return own != null ? own : inherited;
    }

    /**
     * Maps a broken rule to the property that set the value, as Boot's {@link
     * InvalidConfigurationPropertyValueException}, whose failure analysis also says where the value
     * was set.
     */
    private InvalidConfigurationPropertyValueException invalid(
            String id, InvalidElectorConfigException ex) {
        Election election = properties.getElections().get(id);
        String rule = ex.getMessage().replaceFirst("^redlease: ", "");
        Setting setting = ex.setting();
        // Boot's exception takes no cause; the core's rule is carried in the reason.
        return switch (setting) {
            case NAME -> {
                String property = property(id, "name", true);
                yield invalidValue(
                        property,
                        election == null ? properties.getName() : election.getName(),
                        rule,
                        "Change " + property + " as the rule says.");
            }
            case TTL -> {
                boolean own = election != null && election.getTtl() != null;
                String property = property(id, "ttl", own);
                yield invalidValue(
                        property,
                        own ? election.getTtl() : properties.getTtl(),
                        rule,
                        "Set " + property + " to at least 100ms; the default is 5s.");
            }
            case RENEW_INTERVAL -> {
                boolean own = election != null && election.getRenewInterval() != null;
                String property = property(id, "renew-interval", own);
                yield invalidValue(
                        property,
                        own ? election.getRenewInterval() : properties.getRenewInterval(),
                        rule,
                        "Set "
                                + property
                                + " to at least 1ms and at most half the TTL, or remove it"
                                + " to renew every third of the TTL.");
            }
            case ACQUIRE_INTERVAL -> {
                boolean own = election != null && election.getAcquireInterval() != null;
                String property = property(id, "acquire-interval", own);
                yield invalidValue(
                        property,
                        own ? election.getAcquireInterval() : properties.getAcquireInterval(),
                        rule,
                        "Set "
                                + property
                                + " to at least 1ms and less than the TTL, or remove it to"
                                + " poll every half TTL.");
            }
            case FENCED_KEY_PREFIXES -> {
                String property = property(id, "fenced-key-prefixes", election != null);
                yield invalidValue(
                        property,
                        fencedKeyPrefixes(election),
                        rule,
                        "Remove the empty entry from " + property + ".");
            }
            case DRAIN_TIMEOUT ->
                    invalidValue(
                            "spring.lifecycle.timeout-per-shutdown-phase",
                            shutdownPhaseTimeout,
                            rule,
                            "Set spring.lifecycle.timeout-per-shutdown-phase to a positive"
                                    + " duration.");
            case CONNECT_TIMEOUT ->
                    invalidValue(
                            "redlease.connect-timeout",
                            properties.getConnectTimeout(),
                            rule,
                            "Set redlease.connect-timeout to at least 1ms; the default is 10s.");
            case REPLICA_ACKNOWLEDGEMENT ->
                    invalidValue(
                            "redlease.replica-acknowledgement.timeout",
                            properties.getReplicaAcknowledgement().getTimeout(),
                            rule,
                            "Set redlease.replica-acknowledgement.timeout to a positive"
                                    + " duration below the acquire timeout, or"
                                    + " redlease.replica-acknowledgement.replicas to 0 to"
                                    + " turn the check off.");
        };
    }

    private static InvalidConfigurationPropertyValueException invalidValue(
            String property, @Nullable Object value, String rule, String fix) {
        return new InvalidConfigurationPropertyValueException(property, value, rule + ". " + fix);
    }

    /** Returns the property path of a setting, on the election itself or inherited. */
    private static String property(String id, String setting, boolean onElection) {
        if (Elections.DEFAULT.equals(id) || !onElection) {
            return "redlease." + setting;
        }
        return "redlease.elections." + id + "." + setting;
    }
}
