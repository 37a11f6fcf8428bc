package io.redlease.boot.lifecycle;

import io.redlease.core.BeforeRelease;
import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.springframework.context.Lifecycle;

/**
 * The leader-only lifecycles of each election: beans marked {@code @LeaderOnly} that implement
 * {@link Lifecycle}, listener containers named in {@code redlease.lifecycle.listeners}, and any
 * registered with {@link #register}. They are not started with the application context.
 *
 * <p>When this instance is elected, its election's lifecycles are started in phase order (lowest
 * first) on a thread of their own, never on the engine's threads; when the term ends they are
 * stopped in reverse phase order, a {@link org.springframework.context.SmartLifecycle} through
 * {@code stop(Runnable)}, awaited up to the election's drain timeout. On a graceful step-down
 * (shutdown, resign) the lease is released only after they have stopped or the drain timeout
 * passed, so a successor starts its own only after this instance's have stopped. When the lease is
 * lost or expires they are stopped at once, and the lease is not held for them: fencing covers what
 * they do meanwhile.
 *
 * <p>A lifecycle that fails to start or stop is logged at WARN and reported to the {@link
 * Listener}s (a meter, an application event); the others still start or stop and the election goes
 * on.
 */
public final class LeaderLifecycles {

    private final Supplier<Elections> elections;

    private final Supplier<List<Listener>> listeners;

    private final Map<String, Role> roles = new ConcurrentHashMap<>();

    /**
     * Creates the registry.
     *
     * @param elections the application's elections, looked up when first needed
     * @param listeners the listeners to report drains and failures to, looked up when first needed
     */
    public LeaderLifecycles(Supplier<Elections> elections, Supplier<List<Listener>> listeners) {
        this.elections = elections;
        this.listeners = listeners;
    }

    /**
     * Registers a lifecycle to run only while this instance leads an election. Register before the
     * election starts; a lifecycle registered during a term starts with the next term.
     *
     * @param electionId the election id, {@value Elections#DEFAULT} for the main election
     * @param name the name reported in logs, the endpoint and health (a bean name, a listener id)
     * @param lifecycle the lifecycle; it must not be started by anything else
     */
    public void register(String electionId, String name, Lifecycle lifecycle) {
        role(electionId).add(name, lifecycle);
    }

    /** Returns the ids of the elections that have leader-only lifecycles, sorted. */
    public List<String> electionIds() {
        return roles.entrySet().stream()
                .filter(entry -> !entry.getValue().members().isEmpty())
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
    }

    /**
     * Returns each election's leader-only lifecycles in start order, with whether each runs now.
     *
     * @return the members by election id; elections without any are left out
     */
    public Map<String, List<Member>> members() {
        Map<String, List<Member>> members = new LinkedHashMap<>();
        for (String id : electionIds()) {
            members.put(id, roles.get(id).members());
        }
        return members;
    }

    /** Returns the observer that starts an election's lifecycles when this instance is elected. */
    public Observer observer(String electionId) {
        return role(electionId);
    }

    /** Returns the hook that holds a graceful release until an election's lifecycles stopped. */
    public BeforeRelease beforeRelease(String electionId) {
        return role(electionId);
    }

    private Role role(String electionId) {
        return roles.computeIfAbsent(
                electionId,
                id -> new Role(id, () -> elections.get().get(id), () -> listeners.get()));
    }

    /**
     * One leader-only lifecycle as reported by the endpoint and health.
     *
     * @param name the bean name or listener id
     * @param phase the phase it starts in (0 for a plain {@link Lifecycle})
     * @param running whether it runs now
     */
    public record Member(String name, int phase, boolean running) {}

    /** What a lifecycle failed to do. */
    public enum Action {
        /** Starting after election. */
        START,
        /** Stopping at the end of a term. */
        STOP
    }

    /** Receives the drains and failures of leader-only lifecycles; every method has a no-op. */
    public interface Listener {

        /**
         * Called once per term with lifecycles, when they have all stopped (or the drain timeout
         * passed), with the time from the end of the term.
         *
         * @param electionId the election id
         * @param elector the election's elector
         * @param drain how long stopping took
         */
        default void onDrained(String electionId, Elector elector, Duration drain) {}

        /**
         * Called when a lifecycle failed to start or stop, or did not stop within the drain
         * timeout.
         *
         * @param electionId the election id
         * @param elector the election's elector
         * @param member the lifecycle's name
         * @param action what it failed to do
         * @param error the failure
         */
        default void onFailed(
                String electionId,
                Elector elector,
                String member,
                Action action,
                Throwable error) {}
    }
}
