package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every line the library logs, and every message of the plain exceptions it throws, starts with
 * {@code redlease: }, as the Go library's errors do. This test reads the main sources of the
 * library's modules and checks each log call and exception whose message starts with a literal;
 * messages built from a variable are covered by the log capture of {@code
 * QuietStartApplicationTests}. Configuration failures that Spring Boot reports against a property
 * (its own exception types) begin with the property's name, which starts with {@code redlease.},
 * and are not checked here.
 */
class LogPrefixConventionTests {

    static final String PREFIX = "redlease: ";

    /** The library's modules, from this module's directory. */
    private static final List<Path> SOURCES =
            List.of(
                    Path.of("../redlease-core/src/main/java"),
                    Path.of("../redlease-jdbc/src/main/java"),
                    Path.of("src/main/java"),
                    Path.of("../redlease-spring-boot-test/src/main/java"));

    /** A log call: the logger, its level, and what follows the parenthesis. */
    private static final Pattern LOG_CALL =
            Pattern.compile("\\b(?:logger|log)\\.(?:trace|debug|info|warn|error)\\(\\s*");

    /** A plain exception whose first argument is its message. */
    private static final Pattern EXCEPTION =
            Pattern.compile(
                    "\\bnew\\s+(?:IllegalArgumentException|IllegalStateException"
                            + "|UnsupportedOperationException|QueryTimeoutException"
                            + "|InvalidDataAccessApiUsageException|RedisSystemException"
                            + "|CancellationException|TimeoutException"
                            + "|InvalidElectorConfigException|NotLeaderException"
                            + "|InvalidEndpointRequestException)\\(\\s*");

    private static final Pattern LITERAL = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

    @Test
    void everyLogLineAndExceptionMessageStartsWithThePrefix() {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path root : SOURCES) {
            assertThat(root).isDirectory();
            for (Path file : javaFiles(root)) {
                String source = read(file);
                checked += check(file, source, LOG_CALL, broken);
                checked += check(file, source, EXCEPTION, broken);
            }
        }
        // The scan must find what it checks: a pattern that stopped matching would pass silently.
        assertThat(checked).isGreaterThan(100);
        assertThat(broken).isEmpty();
    }

    @Test
    void theScanFindsALineWithoutThePrefix() {
        List<String> broken = new ArrayList<>();
        String source =
                "class X { void f() { logger.info(\"Elected leader\"); "
                        + "logger.warn(\"redlease: fine\"); "
                        + "throw new IllegalStateException(\n \"stopping\"); } }";
        int checked = check(Path.of("X.java"), source, LOG_CALL, broken);
        checked += check(Path.of("X.java"), source, EXCEPTION, broken);
        assertThat(checked).isEqualTo(3);
        assertThat(broken).hasSize(2);
    }

    /**
     * Checks the calls the pattern finds whose argument starts with a string literal (for
     * exceptions that take the election's name first, the first literal among the arguments);
     * returns how many it checked.
     */
    private static int check(Path file, String source, Pattern call, List<String> broken) {
        int checked = 0;
        Matcher matcher = call.matcher(source);
        while (matcher.find()) {
            String rest =
                    source.substring(matcher.end(), Math.min(source.length(), matcher.end() + 300));
            Matcher literal = LITERAL.matcher(rest);
            if (!literal.find() || !startsMessage(rest, literal.start())) {
                continue;
            }
            checked++;
            if (!literal.group(1).startsWith(PREFIX)) {
                int line = source.substring(0, matcher.start()).split("\n", -1).length;
                broken.add(file + ":" + line + ": \"" + literal.group(1) + "\"");
            }
        }
        return checked;
    }

    /**
     * Returns whether the literal at {@code index} is the message: the first argument, or the
     * second after a plain name (an election name or bean name comes first in some exceptions).
     */
    private static boolean startsMessage(String rest, int index) {
        String before = rest.substring(0, index).strip();
        return before.isEmpty() || before.matches("[\\w.()]+\\s*,");
    }

    private static List<Path> javaFiles(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().endsWith(".java")).toList();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
