package io.redlease.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * An external server named by an environment variable: {@code
 * scheme://[user[:password]@]host[:port][/path][?user=…&password=…]}, with an optional {@code
 * jdbc:} prefix, so both {@code postgresql://postgres@db:5432/test} and {@code
 * jdbc:postgresql://db:5432/test?user=postgres} work.
 */
record ServerUrl(String host, int port, String user, String password, String path) {

    private static final int CONNECT_TIMEOUT_MILLIS = 5_000;

    /**
     * Parses {@code url}, whose variable is {@code envVar}.
     *
     * @param schemes the accepted schemes (without {@code jdbc:}), the first one shown in messages
     * @param defaultPort the port when the URL has none
     * @param defaultUser the user when the URL has none
     * @param defaultPassword the password when the URL names no user
     * @param defaultPath the path when the URL has none
     * @throws IllegalArgumentException naming the variable and the expected form
     */
    static ServerUrl parse(
            String envVar,
            String url,
            List<String> schemes,
            int defaultPort,
            String defaultUser,
            String defaultPassword,
            String defaultPath) {
        String form =
                envVar
                        + " must look like "
                        + schemes.get(0)
                        + "://[user[:password]@]host[:port]/"
                        + (defaultPath.isEmpty() ? "path" : defaultPath)
                        + " but was "
                        + url;
        String stripped = url.strip();
        if (stripped.startsWith("jdbc:")) {
            stripped = stripped.substring("jdbc:".length());
        }
        URI uri;
        try {
            uri = new URI(stripped);
        } catch (URISyntaxException ex) {
            throw new IllegalArgumentException(form, ex);
        }
        if (uri.getScheme() == null
                || !schemes.contains(uri.getScheme())
                || uri.getHost() == null) {
            throw new IllegalArgumentException(form);
        }
        String user = defaultUser;
        String password = defaultPassword;
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null && !userInfo.isEmpty()) {
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? "" : decode(userInfo.substring(colon + 1));
        }
        String query = uri.getRawQuery();
        if (query != null) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                String key = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                if (key.equals("user")) {
                    user = value;
                } else if (key.equals("password")) {
                    password = value;
                }
            }
        }
        String rawPath = uri.getRawPath();
        String path =
                rawPath == null || rawPath.length() <= 1
                        ? defaultPath
                        : decode(rawPath.substring(1));
        int port = uri.getPort() < 0 ? defaultPort : uri.getPort();
        return new ServerUrl(uri.getHost(), port, user, password, path);
    }

    /**
     * Checks that the server accepts TCP connections, so that a wrong variable fails with one line
     * rather than with a driver's stack trace in every test.
     *
     * @throws IllegalStateException naming the variable and the address
     */
    void requireReachable(String server, String envVar) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MILLIS);
        } catch (IOException ex) {
            throw new MissingServerException(
                    "The "
                            + server
                            + " named by "
                            + envVar
                            + " does not accept connections at "
                            + host
                            + ":"
                            + port
                            + " ("
                            + ex.getMessage()
                            + "): start it, or unset "
                            + envVar
                            + " to let the tests start their own");
        }
    }

    private static String decode(String value) {
        return URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** Leaves the password out. */
    @Override
    public String toString() {
        return "ServerUrl[" + user + "@" + host + ":" + port + "/" + path + "]";
    }

    static @Nullable String env(String name) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? null : value;
    }
}
