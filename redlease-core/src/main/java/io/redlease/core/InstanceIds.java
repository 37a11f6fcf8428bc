package io.redlease.core;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Makes the instance id an {@link ElectorConfig} gets when none is set: the host name and 16 random
 * hex digits.
 */
final class InstanceIds {

    private InstanceIds() {}

    /** Returns {@code <host>-<16 hex digits>}, or just the digits when the host has no name. */
    static String generate() {
        byte[] random = new byte[8];
        new SecureRandom().nextBytes(random);
        String hex = HexFormat.of().formatHex(random);
        String host = hostName();
        return host.isEmpty() ? hex : host + "-" + hex;
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.trim();
        }
        try {
            Path kernel = Path.of("/proc/sys/kernel/hostname");
            if (Files.isReadable(kernel)) {
                return Files.readString(kernel, StandardCharsets.UTF_8).trim();
            }
            return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
        } catch (Exception ex) {
            return "";
        }
    }
}
