package io.redlease.boot.autoconfigure;

import io.redlease.boot.event.LeadershipEventPublisher;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeaderTask;
import io.redlease.core.LeadershipContext;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.task.SimpleAsyncTaskExecutorBuilder;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ConcurrencyThrottleSupport;

/**
 * Auto-configuration of redlease leader election: one {@link Elector} per configured election over
 * the application's {@link RedisConnectionFactory}, the {@link Elections} registry, {@link
 * LeadershipContext}, leadership events and logging, the partitioned elections of {@code
 * redlease.partitions.<id>} (held by the registry, with their events), and the lifecycles that
 * start the elections when the context is refreshed and step them down on shutdown.
 *
 * <p>The main election's elector is the {@code redleaseElector} bean, replaced by any {@link
 * Elector} bean of the application; {@link ElectorCustomizer} beans adjust every elector the
 * auto-configuration builds. {@link LeaderTask} beans run in every term of the main election.
 *
 * <p>The lifecycles belong to the context that defines the {@link Elections}: a child context that
 * finds its parent's registry starts and stops nothing, so closing it leaves the parent's elections
 * running.
 *
 * <p>While the context runs and has leader-only work that nothing else keeps running on a follower
 * (leader-only lifecycles and listener containers, partitioned elections, leader tasks, leadership
 * event listeners), a non-daemon thread keeps the JVM up ({@code redlease.keep-alive}).
 *
 * <p>It backs off unless the application has exactly one {@link RedisConnectionFactory} (or one
 * marked primary); {@link RedleaseChecksAutoConfiguration} then fails startup naming the reason and
 * the fix. With {@code redlease.enabled=false}, {@link RedleaseDisabledAutoConfiguration} applies
 * instead.
 */
@AutoConfiguration(
        afterName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@ConditionalOnClass({Elector.class, RedisConnectionFactory.class})
@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RedleaseProperties.class)
public final class RedleaseAutoConfiguration {

    /** The bean name of an {@link Executor} that runs observer callbacks and events, if any. */
    public static final String CALLBACK_EXECUTOR_BEAN_NAME = "redleaseCallbackExecutor";

    @Bean
    ElectorFactory redleaseElectorFactory(
            RedleaseProperties properties,
            ObjectProvider<RedisConnectionFactory> connectionFactory,
            ObjectProvider<ElectorCustomizer> customizers,
            Environment environment,
            BeanFactory beanFactory) {
        Duration phaseTimeout =
                Binder.get(environment)
                        .bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
                        .orElse(DEFAULT_SHUTDOWN_PHASE_TIMEOUT);
        Executor callbackExecutor = callbackExecutor(environment, beanFactory);
        return new ElectorFactory(
                properties,
                connectionFactory,
                customizers.orderedStream().toList(),
                phaseTimeout,
                callbackExecutor,
                callbackExecutor instanceof OwnCallbackExecutor own ? own : null);
    }

    private static final Duration DEFAULT_SHUTDOWN_PHASE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Returns the executor for observer callbacks and leadership events: the application's {@value
     * #CALLBACK_EXECUTOR_BEAN_NAME} bean; else, with virtual threads active, a virtual thread per
     * task (so a blocked listener holds up only its own election): the application task executor if
     * it is one without a concurrency limit, else one of redlease's own (built with Boot's {@code
     * SimpleAsyncTaskExecutorBuilder}, so with the application's task decorator, and closed with
     * the context); else null for the engine's default pool, which adds a thread while callbacks
     * block. The engine hands callbacks over on its own threads, so an executor that makes the
     * caller wait (a concurrency limit, as {@code spring.task.execution.simple.concurrency-limit}
     * sets) would stall every election on them; the platform-thread application task executor is
     * not used either: its few threads and unbounded queue would let a handful of blocked listeners
     * stall every election's events.
     */
    private static @Nullable Executor callbackExecutor(
            Environment environment, BeanFactory beanFactory) {
        if (beanFactory.containsBean(CALLBACK_EXECUTOR_BEAN_NAME)) {
            return beanFactory.getBean(CALLBACK_EXECUTOR_BEAN_NAME, Executor.class);
        }
        if (!Threading.VIRTUAL.isActive(environment)) {
            return null;
        }
        if (beanFactory.containsBean("applicationTaskExecutor")
                && beanFactory.getBean("applicationTaskExecutor")
                        instanceof SimpleAsyncTaskExecutor application
                && !application.isThrottleActive()) {
            return application;
        }
        // Boot's builder applies the application's task decorator, and the termination wait of
        // spring.task.execution.shutdown.*: closed with the context, it waits for callbacks under
        // way as the application task executor would. Never with a concurrency limit.
        OwnCallbackExecutor own =
                beanFactory
                        .getBeanProvider(SimpleAsyncTaskExecutorBuilder.class)
                        .getIfAvailable(SimpleAsyncTaskExecutorBuilder::new)
                        .threadNamePrefix("redlease-callback-")
                        .virtualThreads(true)
                        .concurrencyLimit(null)
                        .rejectTasksWhenLimitReached(false)
                        .configure(new OwnCallbackExecutor());
        own.setConcurrencyLimit(ConcurrencyThrottleSupport.UNBOUNDED_CONCURRENCY);
        return own;
    }

    /** The callback executor redlease makes for itself, which it closes with the context. */
    static final class OwnCallbackExecutor extends SimpleAsyncTaskExecutor {

        private static final long serialVersionUID = 1L;
    }

    @Bean
    @ConditionalOnMissingBean(Elector.class)
    Elector redleaseElector(ElectorFactory electorFactory) {
        return electorFactory.create(Elections.DEFAULT);
    }

    @Bean
    PartitionedElectionFactory redleasePartitionedElectionFactory(
            RedleaseProperties properties,
            ElectorFactory electorFactory,
            RedisConnectionFactory connectionFactory,
            ApplicationEventPublisher publisher,
            ObjectProvider<SlotJobs> slotJobs) {
        return new PartitionedElectionFactory(
                properties, electorFactory, connectionFactory, publisher, slotJobs::getIfUnique);
    }

    @Bean
    @ConditionalOnMissingBean
    Elections redleaseElections(
            ObjectProvider<Elector> elector,
            ElectorFactory electorFactory,
            PartitionedElectionFactory partitionsFactory,
            ObjectProvider<Elections> self,
            RedleaseProperties properties) {
        Map<String, Elector> electors = new LinkedHashMap<>();
        Elector main = elector.getObject();
        electors.put(Elections.DEFAULT, main);
        for (String id : properties.getElections().keySet()) {
            if (Elections.DEFAULT.equals(id)) {
                throw new InvalidRedleasePropertyException(
                        "redlease.elections." + id,
                        id,
                        "'" + Elections.DEFAULT + "' is the id of the main election",
                        "Configure the main election with the top-level redlease.* properties, or"
                                + " choose another id.",
                        null);
            }
            if (Elections.PARTITIONS.equals(id)) {
                throw new InvalidRedleasePropertyException(
                        "redlease.elections." + id,
                        id,
                        "'"
                                + Elections.PARTITIONS
                                + "' is reserved: health details and the redlease endpoint list"
                                + " the partitioned elections under it",
                        "Choose another id for this election.",
                        null);
            }
            electors.put(id, electorFactory.create(id));
        }
        Map<String, PartitionedElection> partitioned =
                partitionsFactory.createAll(main.instanceId(), self::getObject);
        ElectionNames.check(electors, partitioned);
        return Elections.of(electors, partitioned);
    }

    @Bean
    @ConditionalOnBean(value = Elections.class, search = SearchStrategy.CURRENT)
    PartitionsLifecycle redleasePartitionsLifecycle(
            Elections elections,
            PartitionedElectionFactory partitionsFactory,
            RedleaseProperties properties) {
        return new PartitionsLifecycle(
                elections,
                partitionsFactory::autoStartup,
                RedleaseLifecycle.phase(properties.getShutdownOrder()));
    }

    @Bean
    @ConditionalOnMissingBean
    LeadershipContext leadershipContext(Elections elections) {
        return new LeadershipContext(elections);
    }

    @Bean
    @ConditionalOnBean(value = Elections.class, search = SearchStrategy.CURRENT)
    RedleaseLifecycle redleaseLifecycle(
            Elections elections,
            ElectorFactory electorFactory,
            ObjectProvider<LeaderTask> tasks,
            RedleaseProperties properties) {
        List<LeaderTask> leaderTasks = tasks.orderedStream().toList();
        LeaderTask mainTask =
                switch (leaderTasks.size()) {
                    case 0 -> null;
                    case 1 -> leaderTasks.get(0);
                    default -> new CompositeLeaderTask(leaderTasks);
                };
        return new RedleaseLifecycle(
                elections,
                electorFactory::autoStartup,
                mainTask,
                electorFactory.phaseTimeout(),
                RedleaseLifecycle.phase(properties.getShutdownOrder()));
    }

    @Bean
    @ConditionalOnBean(value = Elections.class, search = SearchStrategy.CURRENT)
    @ConditionalOnBooleanProperty(name = "redlease.keep-alive", matchIfMissing = true)
    LeaderOnlyKeepAlive redleaseKeepAlive(
            ApplicationContext context,
            ObjectProvider<Elections> elections,
            ObjectProvider<LeaderLifecycles> lifecycles,
            ObjectProvider<LeaderTask> tasks) {
        return new LeaderOnlyKeepAlive(
                context,
                elections::getIfAvailable,
                lifecycles::getIfAvailable,
                () -> tasks.stream().findAny().isPresent());
    }

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    ElectorCustomizer redleaseLoggingCustomizer() {
        return (id, builder) -> builder.observer(new LoggingObserver(builder.name()));
    }

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE + 1)
    ElectorCustomizer redleaseEventsCustomizer(
            ApplicationEventPublisher publisher, ObjectProvider<Elections> elections) {
        return (id, builder) ->
                builder.observer(new LeadershipEventPublisher(publisher, id, elections::getObject));
    }
}
