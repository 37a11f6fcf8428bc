package io.redlease.boot.discovery;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.LeaderInfo;
import java.net.URI;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.web.client.RestClient;

/**
 * Forwards a request to the current leader of an election, at the URL it advertised (see {@link
 * Elector#advertise}), with a {@link RestClient}.
 *
 * <p>The pattern: a follower that receives a request only the leader may serve calls {@link
 * #forward}; the leader serves it itself. Every forwarded request carries the header {@value
 * #FORWARDED_HEADER} (the forwarding instance's id); an instance that receives a request with that
 * header and does not lead answers with an error (503) instead of forwarding again, so a request
 * that arrives during a hand-off never bounces between instances. Leadership may move while the
 * request travels: the leader's own work must still be fenced.
 */
public final class LeaderForwarder {

    /** The header that marks a forwarded request; its value is the forwarding instance's id. */
    public static final String FORWARDED_HEADER = "X-Redlease-Forwarded-By";

    private final Elections elections;

    private final RestClient.Builder builder;

    /**
     * Creates a forwarder.
     *
     * @param elections the application's elections
     * @param builder the builder of the clients, cloned for each leader URL
     */
    public LeaderForwarder(Elections elections, RestClient.Builder builder) {
        this.elections = elections;
        this.builder = builder;
    }

    /**
     * Returns the URL of the main election's leader when another instance leads and advertised one;
     * empty when this instance leads, the lease is free or the leader advertised no URL.
     */
    public Optional<URI> leaderUrl() {
        return leaderUrl(null);
    }

    /**
     * Returns the URL of an election's leader when another instance leads and advertised one.
     *
     * @param election the election id; the main election when null
     */
    public Optional<URI> leaderUrl(@Nullable String election) {
        Elector elector = elections.get(election);
        return elector.leaderInfo()
                .filter(info -> !info.instanceId().equals(elector.instanceId()))
                .flatMap(LeaderInfo::url)
                .map(URI::create);
    }

    /**
     * Calls the main election's leader: {@code call} gets a client whose base URL is the leader's
     * advertised URL and which sends {@value #FORWARDED_HEADER}.
     *
     * @param call the request, such as {@code rest -> rest.post().uri("/jobs").body(job)
     *     .retrieve().toEntity(String.class)}
     * @return what {@code call} returns
     * @throws NoLeaderUrlException when this instance leads (serve the request here), no instance
     *     holds the lease, or the leader advertised no URL
     */
    public <T> T forward(Function<RestClient, T> call) {
        return forward(null, call);
    }

    /**
     * Calls an election's leader, like {@link #forward(Function)}.
     *
     * @param election the election id; the main election when null
     * @param call the request
     * @return what {@code call} returns
     * @throws NoLeaderUrlException when there is no other leader to call
     */
    public <T> T forward(@Nullable String election, Function<RestClient, T> call) {
        Elector elector = elections.get(election);
        Optional<LeaderInfo> leader = elector.leaderInfo();
        if (leader.isEmpty()) {
            throw new NoLeaderUrlException(elector.name(), "no instance leads it");
        }
        if (leader.get().instanceId().equals(elector.instanceId())) {
            throw new NoLeaderUrlException(elector.name(), "this instance leads it");
        }
        String url =
                leader.get()
                        .url()
                        .orElseThrow(
                                () ->
                                        new NoLeaderUrlException(
                                                elector.name(),
                                                "its leader "
                                                        + leader.get().instanceId()
                                                        + " advertised no URL"));
        RestClient client =
                builder.clone()
                        .baseUrl(url)
                        .defaultHeader(FORWARDED_HEADER, elector.instanceId())
                        .build();
        return call.apply(client);
    }

    /** Thrown when a request cannot be forwarded because there is no other leader to call. */
    public static final class NoLeaderUrlException extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        private final String election;

        NoLeaderUrlException(String election, String reason) {
            super("redlease: cannot forward to the leader of '" + election + "': " + reason);
            this.election = election;
        }

        /** Returns the election name. */
        public String election() {
            return election;
        }
    }
}
