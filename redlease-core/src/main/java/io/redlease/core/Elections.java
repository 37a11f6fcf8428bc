package io.redlease.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The electors of an application by election id: the one {@code @LeaderOnly} and {@link
 * LeadershipContext} use to find the election a piece of work belongs to.
 *
 * <p>The id {@value #DEFAULT} (or an empty id) is the application's main election; other ids name
 * extra elections. Ids are local names chosen by the application; the election {@link
 * Elector#name() name} is what instances share in Redis.
 */
public final class Elections {

    /** The id of the main election, used when no id is given. */
    public static final String DEFAULT = "default";

    private final Map<String, Elector> electors;

    private Elections(Map<String, Elector> electors) {
        this.electors = Collections.unmodifiableMap(new LinkedHashMap<>(electors));
    }

    /**
     * Creates a registry.
     *
     * @param electors the electors by id, in a stable order; may contain {@value #DEFAULT}
     * @return the registry
     */
    public static Elections of(Map<String, Elector> electors) {
        electors.forEach(
                (id, elector) -> {
                    if (id == null || id.isBlank() || elector == null) {
                        throw new IllegalArgumentException(
                                "redlease: election ids must not be blank and electors not null");
                    }
                });
        return new Elections(electors);
    }

    /** Creates a registry holding one elector as the main election. */
    public static Elections of(Elector elector) {
        return of(Map.of(DEFAULT, elector));
    }

    /**
     * Returns the elector of an election.
     *
     * @param id the election id; empty or null means {@value #DEFAULT}
     * @throws UnknownElectionException if there is no such election
     */
    public Elector get(@Nullable String id) {
        String key = normalize(id);
        Elector elector = electors.get(key);
        if (elector == null) {
            throw new UnknownElectionException(key, electors.keySet());
        }
        return elector;
    }

    /** Returns the elector of an election, or empty when there is none. */
    public Optional<Elector> find(@Nullable String id) {
        return Optional.ofNullable(electors.get(normalize(id)));
    }

    /** Returns the election ids, in registration order. */
    public Set<String> ids() {
        return electors.keySet();
    }

    /** Returns the electors by id, in registration order. */
    public Map<String, Elector> asMap() {
        return electors;
    }

    static String normalize(@Nullable String id) {
        return id == null || id.isEmpty() ? DEFAULT : id;
    }

    @Override
    public String toString() {
        return "Elections" + electors.keySet();
    }
}
