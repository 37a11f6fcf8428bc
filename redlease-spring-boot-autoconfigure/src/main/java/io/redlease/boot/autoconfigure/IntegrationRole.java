package io.redlease.boot.autoconfigure;

import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.integration.endpoint.AbstractEndpoint;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;

/**
 * An election as a Spring Integration role: a leader-only lifecycle that publishes {@link
 * OnGrantedEvent} when this instance is elected and {@link OnRevokedEvent} when the term ends, so
 * the {@code SmartLifecycleRoleController} starts and stops the endpoints annotated with the role.
 * On a graceful step-down the revocation is published, and the endpoints stopped, before the lease
 * is released. The events' {@link Context#yield()} resigns the term.
 */
final class IntegrationRole implements SmartLifecycle {

    private final Elector elector;

    private final String role;

    private final ApplicationEventPublisher publisher;

    private final Context context;

    private volatile boolean granted;

    IntegrationRole(Elector elector, String role, ApplicationEventPublisher publisher) {
        this.elector = elector;
        this.role = role;
        this.publisher = publisher;
        this.context =
                new Context() {
                    @Override
                    public boolean isLeader() {
                        return elector.isLeader();
                    }

                    @Override
                    public void yield() {
                        elector.resign();
                    }

                    @Override
                    public String getRole() {
                        return role;
                    }

                    @Override
                    public String toString() {
                        return "redlease role '" + role + "' of " + elector;
                    }
                };
    }

    /**
     * Registers every election as a role: the main election as {@code mainRole}, a named one as its
     * id.
     */
    static void registerAll(
            LeaderLifecycles lifecycles,
            Elections elections,
            String mainRole,
            ApplicationEventPublisher publisher,
            ListableBeanFactory beanFactory) {
        if (mainRole == null || mainRole.isBlank()) {
            throw new InvalidRedleasePropertyException(
                    "redlease.integration.role",
                    mainRole,
                    "the main election's Spring Integration role must not be empty",
                    "Set redlease.integration.role to the role of the @Role endpoints that follow"
                            + " the main election, such as leader (the default).",
                    null);
        }
        elections
                .asMap()
                .keySet()
                .forEach(
                        id ->
                                refuseAutoStarting(
                                        beanFactory, Elections.DEFAULT.equals(id) ? mainRole : id));
        elections
                .asMap()
                .forEach(
                        (id, elector) -> {
                            String role = Elections.DEFAULT.equals(id) ? mainRole : id;
                            IntegrationRole integration =
                                    new IntegrationRole(elector, role, publisher);
                            lifecycles.register(id, integration.name(), integration);
                        });
    }

    /**
     * Refuses an endpoint of a redlease role that starts with the application: it would run on
     * every instance, leader or not. Checked once the singletons exist, before any of them starts.
     */
    private static void refuseAutoStarting(ListableBeanFactory beanFactory, String role) {
        beanFactory
                .getBeansOfType(AbstractEndpoint.class, false, false)
                .forEach(
                        (name, endpoint) -> {
                            if (role.equals(endpoint.getRole()) && endpoint.isAutoStartup()) {
                                throw new IllegalStateException(
                                        "redlease: the endpoint '"
                                                + name
                                                + "' is in the role '"
                                                + role
                                                + "' of a redlease election but starts with the"
                                                + " application (autoStartup is true), so it would"
                                                + " run on every instance, leader or not. Declare"
                                                + " it with autoStartup = \"false\"; redlease"
                                                + " starts it when this instance is elected");
                            }
                        });
    }

    /** Returns the name the role is listed under in the endpoint and health. */
    String name() {
        return "integration role '" + role + "'";
    }

    @Override
    public void start() {
        granted = true;
        publisher.publishEvent(new OnGrantedEvent(elector, context, role));
    }

    @Override
    public void stop() {
        granted = false;
        publisher.publishEvent(new OnRevokedEvent(elector, context, role));
    }

    @Override
    public boolean isRunning() {
        return granted;
    }

    @Override
    public boolean isAutoStartup() {
        return false;
    }
}
