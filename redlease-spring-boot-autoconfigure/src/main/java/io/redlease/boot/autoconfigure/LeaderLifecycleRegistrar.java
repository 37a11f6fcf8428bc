package io.redlease.boot.autoconfigure;

import io.redlease.boot.autoconfigure.LeaderOnlyLifecycleBeanPostProcessor.Found;
import io.redlease.boot.autoconfigure.ListenerContainers.Registry;
import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.UnknownElectionException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Hands the leader-only lifecycle beans and the listener containers named in {@code
 * redlease.lifecycle.listeners} to {@link LeaderLifecycles}, once, just before the elections start;
 * fails startup on a rule they break: an unknown election or listener id, a container that starts
 * with the application, a bean already running, an elector that would never start them.
 */
final class LeaderLifecycleRegistrar implements SmartLifecycle {

    /**
     * Starts before the elections in either shutdown order, the web server ({@code DEFAULT_PHASE -
     * 2048}) and any listener registry.
     */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2049;

    private static final Log logger = LogFactory.getLog("io.redlease.lifecycle");

    private final LeaderOnlyLifecycleBeanPostProcessor beans;

    private final LeaderLifecycles lifecycles;

    private final Supplier<@Nullable Elections> elections;

    private final RedleaseProperties properties;

    private final Supplier<List<Registry>> registries;

    private final @Nullable ConfigurableListableBeanFactory beanFactory;

    private boolean registered;

    /** Warm-ups of the listener containers registered. */
    private final WarmStandby warmStandby = new WarmStandby();

    private volatile boolean running;

    LeaderLifecycleRegistrar(
            LeaderOnlyLifecycleBeanPostProcessor beans,
            LeaderLifecycles lifecycles,
            Supplier<@Nullable Elections> elections,
            RedleaseProperties properties,
            Supplier<List<Registry>> registries,
            @Nullable ConfigurableListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
        this.beans = beans;
        this.lifecycles = lifecycles;
        this.elections = elections;
        this.properties = properties;
        this.registries = registries;
    }

    @Override
    public synchronized void start() {
        if (!registered) {
            register();
            registered = true;
            warmStandby.start(properties.getConnectTimeout());
        }
        running = true;
    }

    private void register() {
        instantiateLeaderOnlyBeans();
        List<Found> found = beans.found();
        boolean listeners =
                !properties.getLifecycle().getListeners().isEmpty()
                        || properties.getElections().values().stream()
                                .anyMatch(e -> !e.getLifecycle().getListeners().isEmpty());
        Elections elections = this.elections.get();
        if (found.isEmpty() && !listeners) {
            if (elections != null) {
                checkElectors(elections);
            }
            return;
        }
        if (elections != null && inheritsElections()) {
            refuseInChild(found);
            return;
        }
        if (elections == null) {
            throw new IllegalStateException(
                    "redlease: leader-only lifecycles "
                            + found.stream().map(Found::beanName).toList()
                            + " are declared but no elections are configured (redlease needs"
                            + " exactly one RedisConnectionFactory bean); they would never start."
                            + " Configure Redis, or remove @LeaderOnly from them");
        }
        for (Found bean : found) {
            elector(elections, bean);
            ListenerContainers.checkLeaderOnlyBean(
                    bean.beanName(), bean.bean(), LeaderLifecycleRegistrar.class.getClassLoader());
            if (bean.lifecycle().isRunning()) {
                throw new IllegalStateException(
                        "redlease: the leader-only lifecycle bean '"
                                + bean.beanName()
                                + "' is running before this instance was elected: something"
                                + " started it (a start() call in its constructor or init method,"
                                + " or another bean). Let redlease start it when elected");
            }
            lifecycles.register(bean.electionId(), bean.beanName(), bean.lifecycle());
        }
        Map<String, String> claimed = new HashMap<>();
        registerListeners(
                Elections.DEFAULT,
                "redlease.lifecycle.listeners",
                properties.getLifecycle().getListeners(),
                claimed);
        properties
                .getElections()
                .forEach(
                        (id, election) ->
                                registerListeners(
                                        id,
                                        "redlease.elections." + id + ".lifecycle.listeners",
                                        election.getLifecycle().getListeners(),
                                        claimed));
        checkElectors(elections);
    }

    /**
     * Creates the leader-only lifecycle singletons not created yet ({@code @Lazy} ones), so they
     * are found and started when elected, and refuses those of another scope: each instance would
     * be one more lifecycle created after the elections started, never started.
     */
    private void instantiateLeaderOnlyBeans() {
        if (beanFactory == null) {
            return;
        }
        for (String name : beanFactory.getBeanNamesForType(Lifecycle.class, true, false)) {
            Class<?> type = beanFactory.getType(name, false);
            if (type == null || !LeaderOnlyLifecycleBeanPostProcessor.isLeaderOnlyLifecycle(type)) {
                continue;
            }
            if (!beanFactory.isSingleton(name)) {
                throw new IllegalStateException(
                        "redlease: the leader-only lifecycle bean '"
                                + name
                                + "' is not a singleton; each of its instances would be created"
                                + " outside the election and never started. Declare it as a"
                                + " singleton");
            }
            beanFactory.getBean(name);
        }
    }

    /** Returns whether this is a child context whose elections are an ancestor's. */
    private boolean inheritsElections() {
        return beanFactory != null
                && beanFactory.getBeanNamesForType(Elections.class, true, false).length == 0;
    }

    /**
     * Refuses leader-only lifecycles declared in a child context whose elections are an ancestor's:
     * the ancestor's elections started (and may lead a term) before this context was refreshed, so
     * they would not start until the next term, and would stay registered after this context
     * closed. Listener ids that are in none of this context's registries are the ancestor's, which
     * shares the environment ({@code SpringApplicationBuilder.child}), and are left to it.
     */
    private void refuseInChild(List<Found> found) {
        java.util.List<String> names =
                new java.util.ArrayList<>(found.stream().map(Found::beanName).toList());
        List<Registry> registries = this.registries.get();
        java.util.List<String> ids =
                new java.util.ArrayList<>(properties.getLifecycle().getListeners());
        properties
                .getElections()
                .values()
                .forEach(e -> ids.addAll(e.getLifecycle().getListeners()));
        for (String id : ids) {
            for (Registry registry : registries) {
                if (registry.find(id) != null) {
                    names.add(id);
                    break;
                }
            }
        }
        if (!names.isEmpty()) {
            throw new IllegalStateException(
                    "redlease: leader-only lifecycles "
                            + names
                            + " are declared in a child context whose elections are its"
                            + " parent's, which started before this context: they would not"
                            + " start until the next term, and would stay registered after this"
                            + " context closes. Declare them in the context that defines the"
                            + " elections");
        }
    }

    /** Fails when an election with lifecycles has an elector that would never start them. */
    private void checkElectors(Elections elections) {
        for (String id : lifecycles.electionIds()) {
            Elector elector = elections.get(id);
            if (!elector.config().beforeRelease().contains(lifecycles.beforeRelease(id))) {
                throw new IllegalStateException(
                        "redlease: the elector of election '"
                                + id
                                + "' was not built by redlease's auto-configuration, so its"
                                + " leader-only lifecycles "
                                + lifecycles.members().get(id).stream()
                                        .map(LeaderLifecycles.Member::name)
                                        .toList()
                                + " would never start. Adjust the elector with an"
                                + " ElectorCustomizer bean instead of declaring an Elector, or"
                                + " add LeaderLifecycles.observer(id) and beforeRelease(id) to its"
                                + " configuration");
            }
        }
    }

    private static void elector(Elections elections, Found bean) {
        try {
            elections.get(bean.electionId());
        } catch (UnknownElectionException ex) {
            throw new IllegalStateException(
                    "redlease: @LeaderOnly(\""
                            + bean.electionId()
                            + "\") on the lifecycle bean '"
                            + bean.beanName()
                            + "' names an election that is not configured; configure"
                            + " redlease.elections."
                            + bean.electionId()
                            + ".name, or fix the id",
                    ex);
        }
    }

    private void registerListeners(
            String electionId, String property, List<String> ids, Map<String, String> claimed) {
        if (ids.isEmpty()) {
            return;
        }
        List<Registry> registries = this.registries.get();
        for (String id : ids) {
            String earlier = claimed.putIfAbsent(id, property);
            if (earlier != null) {
                throw new InvalidRedleasePropertyException(
                        property,
                        id,
                        "the listener container '" + id + "' is already named in " + earlier,
                        "Name each listener container in one election only.",
                        null);
            }
            SmartLifecycle container = null;
            Registry holder = null;
            for (Registry registry : registries) {
                container = registry.find(id);
                if (container != null) {
                    holder = registry;
                    break;
                }
            }
            if (container == null) {
                throw new InvalidRedleasePropertyException(
                        property,
                        id,
                        registries.isEmpty()
                                ? "no listener endpoint registry to look '"
                                        + id
                                        + "' up in: none of RabbitListenerEndpointRegistry,"
                                        + " KafkaListenerEndpointRegistry and"
                                        + " JmsListenerEndpointRegistry is a bean of the"
                                        + " application"
                                : "no listener container has the id '"
                                        + id
                                        + "' in "
                                        + String.join(
                                                ", ",
                                                registries.stream().map(Registry::name).toList()),
                        "Give the listener that id (for example @RabbitListener(id = \""
                                + id
                                + "\", autoStartup = \"false\")), or remove it from "
                                + property
                                + ".",
                        null);
            }
            if (container.isAutoStartup()) {
                throw new InvalidRedleasePropertyException(
                        property,
                        id,
                        "the listener container '"
                                + id
                                + "' starts with the application (autoStartup is true), so it"
                                + " would run on every instance, leader or not",
                        "Declare the listener with autoStartup = \"false\" (for example"
                                + " @RabbitListener(id = \""
                                + id
                                + "\", autoStartup = \"false\")); redlease starts it when this"
                                + " instance is elected.",
                        null);
            }
            if (container.isRunning()) {
                throw new InvalidRedleasePropertyException(
                        property,
                        id,
                        "the listener container '"
                                + id
                                + "' is running before this instance was elected: something"
                                + " started it (a start() call from a bean that starts ahead of"
                                + " redlease, or the registry's), so it would run on every"
                                + " instance, leader or not",
                        "Do not start the container yourself; redlease starts it when this"
                                + " instance is elected.",
                        null);
            }
            holder.hold();
            lifecycles.register(electionId, id, container);
            if (properties.isWarmStandby()) {
                Runnable warmUp =
                        ListenerContainers.warmUp(
                                container,
                                LeaderLifecycleRegistrar.class.getClassLoader(),
                                beanFactory);
                if (warmUp != null) {
                    warmStandby.add(id, warmUp);
                }
            }
        }
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
