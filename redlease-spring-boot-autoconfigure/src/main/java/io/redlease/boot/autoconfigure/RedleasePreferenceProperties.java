package io.redlease.boot.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of preferred leadership ({@code redlease.preference.*}); off while neither is set. */
@ConfigurationProperties("redlease.preference")
public class RedleasePreferenceProperties {

    /**
     * Priority of this instance as a leader of every election: a leader hands over to a live, ready
     * instance of higher priority. Unset means no preference unless a version is set.
     */
    private @Nullable Integer priority;

    /**
     * Version of this instance, to prefer the newest build as leader (compared after the priority;
     * numbers compare as numbers, a pre-release ranks below its release). Unset means no version.
     */
    private @Nullable String version;

    public @Nullable Integer getPriority() {
        return priority;
    }

    public void setPriority(@Nullable Integer priority) {
        this.priority = priority;
    }

    public @Nullable String getVersion() {
        return version;
    }

    public void setVersion(@Nullable String version) {
        this.version = version;
    }

    /** Returns whether a preference is configured. */
    boolean isSet() {
        return priority != null || (version != null && !version.isBlank());
    }
}
