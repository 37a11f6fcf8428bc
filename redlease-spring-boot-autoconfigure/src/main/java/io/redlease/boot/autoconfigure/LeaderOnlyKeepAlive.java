package io.redlease.boot.autoconfigure;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.boot.event.PartitionAssignedEvent;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.LeaderTask;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.context.event.GenericApplicationListener;
import org.springframework.context.event.GenericApplicationListenerAdapter;
import org.springframework.context.support.AbstractApplicationContext;
import org.springframework.core.ResolvableType;

/**
 * Keeps the JVM running while the application context runs and has leader-only work, so that a
 * follower stays up as a standby even where nothing else would keep it (no web server, a listener
 * container that only the leader starts, daemon engine threads).
 *
 * <p>When its own context is refreshed, it looks for leader-only work: leader-only lifecycles and
 * listener containers, partitioned elections, {@link LeaderTask} beans, listeners of {@link
 * LeadershipGrantedEvent} or {@link PartitionAssignedEvent}. If there is any, it starts one
 * non-daemon thread that waits until the context is closed. An application without such work (a
 * command-line run that is meant to exit) gets no thread. {@code redlease.keep-alive=false} turns
 * it off; it works beside Spring Boot's own {@code spring.main.keep-alive}.
 */
final class LeaderOnlyKeepAlive implements ApplicationListener<ApplicationEvent> {

    /** The name of the thread that keeps the JVM running. */
    static final String THREAD_NAME = "redlease-keep-alive";

    private static final Log logger = LogFactory.getLog(LeaderOnlyKeepAlive.class);

    /** The package of redlease's own listeners, which do no work of the application. */
    private static final String OWN_PACKAGE = "io.redlease.boot.";

    private final ApplicationContext context;

    private final Supplier<@Nullable Elections> elections;

    private final Supplier<@Nullable LeaderLifecycles> lifecycles;

    private final Supplier<Boolean> leaderTasks;

    private @Nullable CountDownLatch closed;

    LeaderOnlyKeepAlive(
            ApplicationContext context,
            Supplier<@Nullable Elections> elections,
            Supplier<@Nullable LeaderLifecycles> lifecycles,
            Supplier<Boolean> leaderTasks) {
        this.context = context;
        this.elections = elections;
        this.lifecycles = lifecycles;
        this.leaderTasks = leaderTasks;
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof ContextRefreshedEvent refreshed
                && refreshed.getApplicationContext() == context) {
            List<String> work = leaderOnlyWork();
            if (!work.isEmpty()) {
                start(work);
            }
        } else if (event instanceof ContextClosedEvent closing
                && closing.getApplicationContext() == context) {
            stop();
        }
    }

    /** Describes the context's leader-only work, or returns an empty list when it has none. */
    List<String> leaderOnlyWork() {
        List<String> work = new ArrayList<>();
        LeaderLifecycles lifecycles = this.lifecycles.get();
        if (lifecycles != null && !lifecycles.members().isEmpty()) {
            work.add("leader-only lifecycles " + lifecycles.members().keySet());
        }
        Elections elections = this.elections.get();
        if (elections != null && !elections.partitionedAsMap().isEmpty()) {
            work.add("partitioned elections " + elections.partitionedAsMap().keySet());
        }
        if (leaderTasks.get()) {
            work.add("leader tasks");
        }
        if (hasLeadershipListeners()) {
            work.add("leadership event listeners");
        }
        return work;
    }

    /**
     * Returns whether a listener of the application (not one of redlease's own, such as its
     * partition meters) hears of won terms or assigned partitions.
     */
    private boolean hasLeadershipListeners() {
        if (!(context instanceof AbstractApplicationContext abstractContext)) {
            return false;
        }
        ResolvableType any = ResolvableType.forClass(ApplicationEvent.class);
        for (ApplicationListener<?> listener : abstractContext.getApplicationListeners()) {
            if (listener.getClass().getName().startsWith(OWN_PACKAGE)) {
                continue;
            }
            GenericApplicationListener generic =
                    listener instanceof GenericApplicationListener known
                            ? known
                            : new GenericApplicationListenerAdapter(listener);
            if (!generic.supportsEventType(any)
                    && (generic.supportsEventType(
                                    ResolvableType.forClass(LeadershipGrantedEvent.class))
                            || generic.supportsEventType(
                                    ResolvableType.forClass(PartitionAssignedEvent.class)))) {
                return true;
            }
        }
        return false;
    }

    private synchronized void start(List<String> work) {
        if (closed != null) {
            return;
        }
        CountDownLatch latch = new CountDownLatch(1);
        Thread thread =
                new Thread(
                        () -> {
                            try {
                                latch.await();
                            } catch (InterruptedException ex) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        THREAD_NAME);
        thread.setDaemon(false);
        thread.start();
        closed = latch;
        if (logger.isDebugEnabled()) {
            logger.debug(
                    "redlease: keeping the JVM running until the context is closed, for its"
                            + " leader-only work: "
                            + String.join(", ", work));
        }
    }

    private synchronized void stop() {
        CountDownLatch latch = closed;
        if (latch != null) {
            latch.countDown();
            closed = null;
        }
    }
}
