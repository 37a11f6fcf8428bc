package io.redlease.boot.autoconfigure;

import io.redlease.boot.discovery.LeaderForwarder;
import io.redlease.core.Elections;
import io.redlease.core.LeaderMetadata;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.client.RestClient;

/**
 * Auto-configuration of leader discovery, when {@code redlease.discovery.enabled} is true: every
 * election advertises this instance's {@link LeaderMetadata} (the {@code redleaseLeaderMetadata}
 * bean, replaced by any {@link LeaderMetadata} bean of the application) while it leads, and a
 * {@link LeaderForwarder} forwards requests to the leader when Spring's {@code RestClient} is on
 * the class path.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "redlease.discovery.enabled")
@ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
@ConditionalOnBean(Elections.class)
@EnableConfigurationProperties(RedleaseDiscoveryProperties.class)
public final class LeaderDiscoveryAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LeaderMetadata redleaseLeaderMetadata(
            RedleaseDiscoveryProperties properties,
            Environment environment,
            ObjectProvider<BuildProperties> build) {
        String url = properties.getUrl();
        if (url != null && !url.isBlank()) {
            checkUrl(url);
        } else {
            url = derivedUrl(environment);
        }
        String version = properties.getVersion();
        if (version == null || version.isBlank()) {
            BuildProperties info = build.getIfAvailable();
            version = info == null ? null : info.getVersion();
        }
        return new LeaderMetadata(url, version, properties.getAttributes());
    }

    @Bean
    SmartInitializingSingleton redleaseLeaderAdvertising(
            Elections elections, LeaderMetadata metadata) {
        return () -> elections.asMap().values().forEach(elector -> elector.advertise(metadata));
    }

    /** Refuses an advertised URL that other instances could not call. */
    private static void checkUrl(String url) {
        try {
            URI uri = new URI(url);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                    || uri.getHost() == null) {
                throw new URISyntaxException(url, "not an absolute http(s) URL with a host");
            }
        } catch (URISyntaxException ex) {
            throw new InvalidConfigurationPropertyValueException(
                    "redlease.discovery.url",
                    url,
                    "the advertised URL must be an absolute http or https URL with a host, which"
                            + " other instances call. Set it to such a URL, for example"
                            + " http://orders-1.internal:8080, or remove it to derive it from"
                            + " server.address and server.port.");
        }
    }

    /**
     * Returns http(s)://address:port/context-path from {@code server.*}; fails when the port is
     * chosen at random (0), since it is not known yet.
     */
    static String derivedUrl(Environment environment) {
        int port = environment.getProperty("server.port", Integer.class, 8080);
        if (port <= 0) {
            throw new InvalidRedleasePropertyException(
                    "redlease.discovery.url",
                    null,
                    "with server.port="
                            + port
                            + " the port is not known before the server"
                            + " starts, so the advertised URL cannot be derived from it",
                    "Set redlease.discovery.url to the URL other instances reach this instance"
                            + " at, or give server.port a fixed value.",
                    null);
        }
        boolean ssl = environment.getProperty("server.ssl.enabled", Boolean.class, false);
        String address = environment.getProperty("server.address");
        String host =
                address == null || address.isBlank() || isWildcard(address) ? localHost() : address;
        if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        String path = environment.getProperty("server.servlet.context-path", "");
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return (ssl ? "https" : "http") + "://" + host + ":" + port + path;
    }

    private static boolean isWildcard(String address) {
        return address.equals("0.0.0.0") || address.equals("::") || address.equals("[::]");
    }

    private static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException ex) {
            return InetAddress.getLoopbackAddress().getHostAddress();
        }
    }

    /** The forwarder, when Spring's RestClient is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RestClient.class)
    static class ForwarderConfiguration {

        @Bean
        @ConditionalOnMissingBean
        LeaderForwarder redleaseLeaderForwarder(
                Elections elections, ObjectProvider<RestClient.Builder> builder) {
            return new LeaderForwarder(elections, builder.getIfAvailable(RestClient::builder));
        }
    }
}
