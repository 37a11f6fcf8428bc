package io.redlease.boot.autoconfigure;

import io.redlease.boot.event.PartitionEventPublisher;
import io.redlease.core.Elections;
import io.redlease.core.InvalidElectorConfigException;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Builds the partitioned elections of {@code redlease.partitions.<id>.*}: each inherits the
 * top-level timings and instance id it does not set, and publishes {@code PartitionEvent}s. Broken
 * rules are reported against the property that set the value.
 */
final class PartitionedElectionFactory {

    private final RedleaseProperties properties;

    private final ElectorFactory electorFactory;

    private final RedisConnectionFactory connectionFactory;

    private final ApplicationEventPublisher publisher;

    /** The once-per-slot jobs, if {@code @LeaderOnly} is enabled; looked up at an assignment. */
    private final Supplier<@Nullable SlotJobs> slotJobs;

    PartitionedElectionFactory(
            RedleaseProperties properties,
            ElectorFactory electorFactory,
            RedisConnectionFactory connectionFactory,
            ApplicationEventPublisher publisher,
            Supplier<@Nullable SlotJobs> slotJobs) {
        this.properties = properties;
        this.slotJobs = slotJobs;
        this.electorFactory = electorFactory;
        this.connectionFactory = connectionFactory;
        this.publisher = publisher;
    }

    /**
     * Creates every configured partitioned election; none is started.
     *
     * @param instanceId the main election's instance id, used where none is configured
     * @param elections the registry they will be part of, looked up at the first event
     */
    Map<String, PartitionedElection> createAll(
            @Nullable String instanceId, Supplier<Elections> elections) {
        Map<String, PartitionedElection> created = new LinkedHashMap<>();
        properties
                .getPartitions()
                .forEach(
                        (id, settings) ->
                                created.put(
                                        id,
                                        new PartitionedElection(
                                                connectionFactory,
                                                config(id, settings, instanceId, elections))));
        return created;
    }

    /** Whether the partitioned election joins when the application starts. */
    boolean autoStartup(String id) {
        RedleasePartitionProperties settings = properties.getPartitions().get(id);
        Boolean own = settings == null ? null : settings.getAutoStartup();
        return own != null ? own : properties.isAutoStartup();
    }

    PartitionedElectionConfig config(
            String id,
            RedleasePartitionProperties settings,
            @Nullable String mainInstanceId,
            Supplier<Elections> elections) {
        Integer count = settings.getCount();
        if (count == null) {
            throw new InvalidRedleasePropertyException(
                    property(id, "count"),
                    null,
                    "the partition count must be set; every instance must use the same count",
                    "Set "
                            + property(id, "count")
                            + " to the number of partitions, from 1 to "
                            + PartitionedElectionConfig.MAX_PARTITIONS
                            + ".",
                    null);
        }
        if (count < 1 || count > PartitionedElectionConfig.MAX_PARTITIONS) {
            throw new InvalidConfigurationPropertyValueException(
                    property(id, "count"),
                    count,
                    "The partition count must be between 1 and "
                            + PartitionedElectionConfig.MAX_PARTITIONS
                            + ". Set it in that range, the same on every instance.");
        }
        String name = name(id, settings);
        Duration ttl = pick(settings.getTtl(), properties.getTtl());
        Duration renew = pick(settings.getRenewInterval(), properties.getRenewInterval());
        Duration acquire = pick(settings.getAcquireInterval(), properties.getAcquireInterval());
        String instanceId =
                pick(pick(settings.getInstanceId(), properties.getInstanceId()), mainInstanceId);
        PartitionedElectionConfig.Builder builder =
                PartitionedElectionConfig.builder(name, count)
                        .drainTimeout(electorFactory.drainTimeout(ttl, renew))
                        .listener(
                                new PartitionEventPublisher(
                                        publisher, id, () -> elections.get().partitioned(id)))
                        .listener(new SlotCatchUp(id, slotJobs));
        Executor executor = electorFactory.callbackExecutor();
        if (executor != null) {
            builder.callbackExecutor(executor);
        }
        try {
            if (ttl != null) {
                builder.ttl(ttl);
            }
            if (renew != null) {
                builder.renewInterval(renew);
            }
            if (acquire != null) {
                builder.acquireInterval(acquire);
            }
            if (instanceId != null && !instanceId.isBlank()) {
                builder.instanceId(instanceId);
            }
            if (settings.getBalanceInterval() != null) {
                builder.balanceInterval(settings.getBalanceInterval());
            }
            if (settings.getSettle() != null) {
                builder.settle(settings.getSettle());
            }
            return builder.build();
        } catch (InvalidElectorConfigException ex) {
            throw invalid(id, settings, ex);
        } catch (IllegalArgumentException ex) {
            // Past the elector's rules, only the balancing settings remain.
            Duration settle = settings.getSettle();
            boolean settleBroken = settle != null && settle.isNegative();
            throw new InvalidConfigurationPropertyValueException(
                    property(id, settleBroken ? "settle" : "balance-interval"),
                    settleBroken ? settle : settings.getBalanceInterval(),
                    rule(ex)
                            + ". "
                            + (settleBroken
                                    ? "Set it to a positive duration, or remove it to settle for"
                                            + " one renew interval."
                                    : "Set it between 1ms and the renew interval, or remove it"
                                            + " for the shorter of the renew interval and"
                                            + " 500ms."));
        }
    }

    private String name(String id, RedleasePartitionProperties settings) {
        String own = settings.getName();
        if (own != null) {
            if (own.isBlank() || own.indexOf('{') >= 0 || own.indexOf('}') >= 0) {
                throw new InvalidConfigurationPropertyValueException(
                        property(id, "name"),
                        own,
                        "The name must not be blank and must not contain '{' or '}' (each"
                                + " partition's keys get the hash tag {<name>:p<i>}). Remove the"
                                + " braces.");
            }
            return own;
        }
        String main = properties.getName();
        if (main == null || main.isBlank()) {
            throw new InvalidRedleasePropertyException(
                    property(id, "name"),
                    null,
                    "the partitioned election's name must be set, or derived from redlease.name",
                    "Set " + property(id, "name") + ", or redlease.name.",
                    null);
        }
        if (id.indexOf('{') >= 0 || id.indexOf('}') >= 0) {
            throw new InvalidConfigurationPropertyValueException(
                    property(id, "name"),
                    null,
                    "The name derived from the id '"
                            + id
                            + "' would contain '{' or '}' (each partition's keys get the hash"
                            + " tag {<name>:p<i>}). Set it to a name without braces.");
        }
        return main.replace("{", "").replace("}", "") + ":" + id;
    }

    private InvalidConfigurationPropertyValueException invalid(
            String id, RedleasePartitionProperties settings, InvalidElectorConfigException ex) {
        return switch (ex.setting()) {
            case TTL -> {
                boolean own = settings.getTtl() != null;
                yield value(
                        own ? property(id, "ttl") : "redlease.ttl",
                        own ? settings.getTtl() : properties.getTtl(),
                        ex,
                        "Set it to at least 100ms; the default is 5s.");
            }
            case RENEW_INTERVAL -> {
                boolean own = settings.getRenewInterval() != null;
                yield value(
                        own ? property(id, "renew-interval") : "redlease.renew-interval",
                        own ? settings.getRenewInterval() : properties.getRenewInterval(),
                        ex,
                        "Set it to at least 1ms and at most half the TTL, or remove it.");
            }
            case ACQUIRE_INTERVAL -> {
                boolean own = settings.getAcquireInterval() != null;
                yield value(
                        own ? property(id, "acquire-interval") : "redlease.acquire-interval",
                        own ? settings.getAcquireInterval() : properties.getAcquireInterval(),
                        ex,
                        "Set it to at least 1ms and less than the TTL, or remove it.");
            }
            case DRAIN_TIMEOUT ->
                    value(
                            "spring.lifecycle.timeout-per-shutdown-phase",
                            null,
                            ex,
                            "Set it to a positive duration.");
            case CONNECT_TIMEOUT ->
                    value(
                            "redlease.connect-timeout",
                            properties.getConnectTimeout(),
                            ex,
                            "Set it to at least 1ms.");
            case NAME, REPLICA_ACKNOWLEDGEMENT, FENCED_KEY_PREFIXES ->
                    value(property(id, "name"), settings.getName(), ex, "Change it.");
        };
    }

    private static InvalidConfigurationPropertyValueException value(
            String property, @Nullable Object value, RuntimeException ex, String fix) {
        return new InvalidConfigurationPropertyValueException(
                property, value, rule(ex) + ". " + fix);
    }

    private static String rule(RuntimeException ex) {
        String message = String.valueOf(ex.getMessage());
        return message.startsWith("redlease: ") ? message.substring(10) : message;
    }

    private static String property(String id, String setting) {
        return "redlease.partitions." + id + "." + setting;
    }

    private static <T> @Nullable T pick(@Nullable T own, @Nullable T inherited) {
        return own != null ? own : inherited;
    }

    /**
     * Has the partitioned election's once-per-slot jobs catch up in a partition right after this
     * instance is assigned it (else they catch up at their next run).
     */
    private record SlotCatchUp(String id, Supplier<@Nullable SlotJobs> slotJobs)
            implements PartitionListener {

        @Override
        public void onAssigned(int partition, long token) {
            SlotJobs jobs = slotJobs.get();
            if (jobs != null) {
                jobs.partitionListener(id).onAssigned(partition, token);
            }
        }
    }
}
