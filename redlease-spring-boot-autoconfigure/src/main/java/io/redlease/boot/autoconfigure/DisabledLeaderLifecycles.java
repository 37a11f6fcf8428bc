package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.ListenerContainers.Registry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * With {@code redlease.enabled=false}, starts with the application what redlease would otherwise
 * start only on the leader: the {@code @LeaderOnly} lifecycle beans that the context does not start
 * itself (a plain {@link Lifecycle}, or a {@link SmartLifecycle} that is not auto-started) and the
 * listener containers named in {@code redlease.lifecycle.listeners} (and {@code
 * redlease.elections.<id>.lifecycle.listeners}), which are declared with {@code autoStartup =
 * "false"}. So they run on every instance, as {@code @LeaderOnly} methods do then, rather than on
 * none; a warning lists them. A container id that no listener has fails startup, as it does with
 * redlease enabled. It starts in the last phase and stops, with what it started, in the first.
 */
final class DisabledLeaderLifecycles implements SmartLifecycle {

    private static final Log logger = LogFactory.getLog(LeaderOnlyAutoConfiguration.class);

    private final ConfigurableListableBeanFactory beanFactory;

    private final Map<String, List<String>> listeners;

    private final Supplier<List<Registry>> registries;

    private final List<Lifecycle> started = new ArrayList<>();

    private volatile boolean running;

    /**
     * Creates the lifecycle.
     *
     * @param beanFactory the bean factory of the leader-only lifecycle beans
     * @param listeners the listener container ids, by the property that names them
     * @param registries the listener endpoint registries
     */
    DisabledLeaderLifecycles(
            ConfigurableListableBeanFactory beanFactory,
            Map<String, List<String>> listeners,
            Supplier<List<Registry>> registries) {
        this.beanFactory = beanFactory;
        this.listeners = listeners;
        this.registries = registries;
    }

    /** Returns the listener container ids of the properties, by the property that names them. */
    static Map<String, List<String>> listenerIds(RedleaseProperties properties) {
        Map<String, List<String>> ids = new LinkedHashMap<>();
        ids.put("redlease.lifecycle.listeners", properties.getLifecycle().getListeners());
        properties
                .getElections()
                .forEach(
                        (id, election) ->
                                ids.put(
                                        "redlease.elections." + id + ".lifecycle.listeners",
                                        election.getLifecycle().getListeners()));
        return ids;
    }

    @Override
    public synchronized void start() {
        List<String> names = new ArrayList<>();
        for (String name : beanFactory.getBeanNamesForType(Lifecycle.class, false, false)) {
            Class<?> type = beanFactory.getType(name, false);
            if (type == null || !LeaderOnlyLifecycleBeanPostProcessor.isLeaderOnlyLifecycle(type)) {
                continue;
            }
            Lifecycle lifecycle = beanFactory.getBean(name, Lifecycle.class);
            boolean startedByContext =
                    lifecycle instanceof SmartLifecycle smart && smart.isAutoStartup();
            if (!startedByContext && !lifecycle.isRunning()) {
                start(lifecycle);
                names.add(name);
            }
        }
        listeners.forEach(
                (property, ids) -> {
                    for (String id : ids) {
                        SmartLifecycle container = container(property, id);
                        if (!container.isRunning()) {
                            start(container);
                            names.add(id);
                        }
                    }
                });
        running = true;
        if (!names.isEmpty()) {
            logger.warn(
                    "redlease: with redlease.enabled=false, leader-only lifecycles and listener containers are"
                            + " started with the application, so they run on every instance: "
                            + names);
        }
    }

    private void start(Lifecycle lifecycle) {
        lifecycle.start();
        started.add(lifecycle);
    }

    private SmartLifecycle container(String property, String id) {
        List<Registry> found = registries.get();
        for (Registry registry : found) {
            SmartLifecycle container = registry.find(id);
            if (container != null) {
                return container;
            }
        }
        throw new InvalidRedleasePropertyException(
                property,
                id,
                "no listener container has the id '"
                        + id
                        + "' in "
                        + (found.isEmpty()
                                ? "any listener endpoint registry (there is none)"
                                : String.join(", ", found.stream().map(Registry::name).toList())),
                "Give the listener that id (for example @RabbitListener(id = \""
                        + id
                        + "\", autoStartup = \"false\")), or remove it from "
                        + property
                        + ".",
                null);
    }

    @Override
    public synchronized void stop() {
        running = false;
        for (int i = started.size() - 1; i >= 0; i--) {
            Lifecycle lifecycle = started.get(i);
            if (lifecycle.isRunning()) {
                lifecycle.stop();
            }
        }
        started.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts last and stops first, as a consumer should. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE;
    }
}
