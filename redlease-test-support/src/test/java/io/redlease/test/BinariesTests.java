package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BinariesTests {

    @TempDir Path root;

    private Path executable(String dir, String name) throws IOException {
        Path file = root.resolve(dir).resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Test
    void findsTheDirectoryHoldingEveryNameOnThePathFirst() throws IOException {
        executable("a", "initdb");
        executable("b", "initdb");
        executable("b", "postgres");
        executable("lib/postgresql/15/bin", "initdb");
        executable("lib/postgresql/15/bin", "postgres");
        Binaries binaries = Binaries.of(root.resolve("a") + ":" + root.resolve("b"), true);
        assertThat(
                        binaries.findDir(
                                List.of("initdb", "postgres"),
                                List.of(root + "/lib/postgresql/*/bin")))
                .isEqualTo(root.resolve("b"));
    }

    @Test
    void usualLocationsAreSearchedNewestVersionFirst() throws IOException {
        for (String version : List.of("9.6", "15", "13")) {
            executable("lib/postgresql/" + version + "/bin", "initdb");
            executable("lib/postgresql/" + version + "/bin", "postgres");
        }
        Binaries binaries = Binaries.of("", true);
        assertThat(
                        binaries.findDir(
                                List.of("initdb", "postgres"),
                                List.of(root + "/lib/postgresql/*/bin")))
                .isEqualTo(root.resolve("lib/postgresql/15/bin"));
        assertThat(Binaries.expand(root + "/lib/postgresql/*/bin"))
                .containsExactly(
                        root.resolve("lib/postgresql/15/bin"),
                        root.resolve("lib/postgresql/13/bin"),
                        root.resolve("lib/postgresql/9.6/bin"));
    }

    @Test
    void withoutUsualLocationsOnlyThePathCounts() throws IOException {
        executable("usr/sbin", "mariadbd");
        assertThat(Binaries.of("", false).find("mariadbd", List.of(root + "/usr/sbin"))).isNull();
        assertThat(Binaries.of("", true).find("mariadbd", List.of(root + "/usr/sbin")))
                .isEqualTo(root.resolve("usr/sbin/mariadbd"));
    }

    @Test
    void aRejectedCandidateIsSkipped() throws IOException {
        executable("sbin", "rabbitmq-server");
        Path real = executable("lib/rabbitmq/bin", "rabbitmq-server");
        Binaries binaries = Binaries.of(root.resolve("sbin").toString(), true);
        assertThat(
                        binaries.find(
                                "rabbitmq-server",
                                List.of(root + "/lib/rabbitmq/bin"),
                                candidate -> !candidate.startsWith(root.resolve("sbin"))))
                .isEqualTo(real);
    }

    @Test
    void nonExecutableFilesDoNotCount() throws IOException {
        Path file = executable("bin", "epmd");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(Binaries.of(root.resolve("bin").toString(), false).find("epmd", List.of()))
                .isNull();
    }

    @Test
    void theServerPathPropertyReplacesPathAndUsualLocations() {
        String before = System.getProperty(Binaries.PATH_PROPERTY);
        System.setProperty(Binaries.PATH_PROPERTY, "");
        try {
            assertThat(Binaries.fromEnvironment().find("sh", List.of("/bin", "/usr/bin"))).isNull();
        } finally {
            if (before == null) {
                System.clearProperty(Binaries.PATH_PROPERTY);
            } else {
                System.setProperty(Binaries.PATH_PROPERTY, before);
            }
        }
    }
}
