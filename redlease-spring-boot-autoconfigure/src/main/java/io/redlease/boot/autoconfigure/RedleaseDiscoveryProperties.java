package io.redlease.boot.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Settings of leader discovery ({@code redlease.discovery.*}). */
@ConfigurationProperties("redlease.discovery")
public class RedleaseDiscoveryProperties {

    /**
     * Whether this instance publishes its URL, version and attributes beside the lease while it
     * leads, for other instances to find the leader.
     */
    private boolean enabled;

    /**
     * URL other instances reach this instance at. Defaults to http(s)://server.address:server.port
     * (the host's address when server.address is unset) with the servlet context path.
     */
    private @Nullable String url;

    /** Version this instance advertises. Defaults to the build's version (build-info), if any. */
    private @Nullable String version;

    /** Free-form attributes this instance advertises, such as a zone. */
    private Map<String, String> attributes = new LinkedHashMap<>();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public @Nullable String getUrl() {
        return url;
    }

    public void setUrl(@Nullable String url) {
        this.url = url;
    }

    public @Nullable String getVersion() {
        return version;
    }

    public void setVersion(@Nullable String version) {
        this.version = version;
    }

    public Map<String, String> getAttributes() {
        return attributes;
    }

    public void setAttributes(Map<String, String> attributes) {
        this.attributes = attributes;
    }
}
