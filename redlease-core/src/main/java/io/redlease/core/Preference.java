package io.redlease.core;

import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How strongly an instance wants to lead an election: a priority, then a version ("prefer the
 * newest build"). Set with {@link Elector#prefer(Preference, java.util.function.BooleanSupplier)}.
 *
 * <p>With a preference, an instance heartbeats its rank and readiness beside the lease (in {@code
 * <name>:candidates}) after each of its acquire attempts and renewals. A leader hands over
 * gracefully, once, to a live and ready candidate that ranks strictly higher; a follower does not
 * take a free lease while such a candidate is live. Equal ranks never hand over, so ties do not
 * flap. A candidate that crashes or stops heartbeating stops counting one time to live after its
 * last heartbeat when followers poll at their acquire interval ({@link
 * ElectorConfig.Builder#leaseAwareScheduling(boolean) lease-aware scheduling} off, acquire interval
 * at most half the time to live, as the Spring Boot starter sets it for preference), and one and a
 * half otherwise, since a lease-aware follower may sleep a whole time to live between attempts. The
 * Go library neither writes nor reads the candidates: it contends without preference.
 *
 * <p>Ranks compare the priority first (higher wins), then the version: split at dots, dashes, plus
 * signs, underscores and between digits and letters; numbers compare as numbers; a pre-release part
 * ({@code 1.4.0-rc1}) ranks below the release ({@code 1.4.0}); letters compare without case. An
 * instance without a version ranks below one with a version and the same priority.
 */
public final class Preference implements Comparable<Preference> {

    private final int priority;

    private final @Nullable String version;

    private final String rank;

    private Preference(int priority, @Nullable String version) {
        this.priority = priority;
        this.version = version;
        this.rank = rank(priority, version);
    }

    /** Returns a preference by priority alone: higher leads. */
    public static Preference priority(int priority) {
        return new Preference(priority, null);
    }

    /**
     * Returns a preference for the newest build: a higher version leads.
     *
     * @throws IllegalArgumentException if the version has no letter or digit
     */
    public static Preference version(String version) {
        return of(0, version);
    }

    /**
     * Returns a preference by priority, then version.
     *
     * @param version the version, or null
     * @throws IllegalArgumentException if the version is not null and has no letter or digit
     */
    public static Preference of(int priority, @Nullable String version) {
        if (version != null && !version.chars().anyMatch(Character::isLetterOrDigit)) {
            throw new IllegalArgumentException(
                    "redlease: a preference version must contain a letter or digit, got '"
                            + version
                            + "'");
        }
        return new Preference(priority, version);
    }

    /** Returns the priority. */
    public int priority() {
        return priority;
    }

    /** Returns the version, if any. */
    public Optional<String> version() {
        return Optional.ofNullable(version);
    }

    /** Returns the rank as stored in Redis: compared byte by byte, higher leads. */
    String rank() {
        return rank;
    }

    /** Returns the key of the named election's candidates. */
    static String candidatesKey(String name) {
        return name + ":candidates";
    }

    @Override
    public int compareTo(Preference other) {
        return rank.compareTo(other.rank);
    }

    @Override
    public boolean equals(@Nullable Object other) {
        return other instanceof Preference that && rank.equals(that.rank);
    }

    @Override
    public int hashCode() {
        return rank.hashCode();
    }

    @Override
    public String toString() {
        return "Preference[priority="
                + priority
                + (version == null ? "" : ", version=" + version)
                + "]";
    }

    /**
     * Returns a string over {@code [0-9a-z]} whose byte order is the preference order: "p", the
     * priority shifted to be non-negative in 10 digits, "v", then per version part "n" and 19
     * digits for a number ("o", its length in 10 digits and the digits for a number of more than 19
     * digits) or "a" and the lower-case letters, and "m" at the end, which sorts after a letter
     * part (a pre-release) and before a number part (a longer release).
     */
    static String rank(int priority, @Nullable String version) {
        StringBuilder rank = new StringBuilder("p");
        rank.append(String.format(Locale.ROOT, "%010d", (long) priority - Integer.MIN_VALUE));
        rank.append('v');
        if (version != null) {
            for (String part :
                    version.toLowerCase(Locale.ROOT)
                            .split("[^a-z0-9]+|(?<=\\d)(?=\\D)|(?<=\\D)(?=\\d)")) {
                if (part.isEmpty()) {
                    continue;
                }
                if (Character.isDigit(part.charAt(0))) {
                    String digits = part.replaceFirst("^0+(?=\\d)", "");
                    if (digits.length() <= 19) {
                        rank.append('n');
                        rank.append("0".repeat(19 - digits.length())).append(digits);
                    } else {
                        // Longer numbers rank above every shorter one, then by length and digits.
                        rank.append('o');
                        rank.append(String.format(Locale.ROOT, "%010d", digits.length()));
                        rank.append(digits);
                    }
                } else {
                    rank.append('a').append(part.replaceAll("[^a-z]", ""));
                }
            }
            rank.append('m');
        }
        return rank.toString();
    }
}
