package io.redlease.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.platform.engine.discovery.ClassNameFilter;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs the whole short tier (every other test class of this package, minus {@code core-defect})
 * again and again in this JVM: {@code mvn -Preliability-repeat -Drepeat=10 verify}. Each run is one
 * dynamic test, so a failing run fails the build and names its failures; a line per run is appended
 * to {@code target/reliability-repeat.txt}. Figures add up over all runs.
 */
@EnabledIfSystemProperty(named = "redlease.repeat", matches = "[1-9][0-9]*")
class ShortTierRepeat {

    @TestFactory
    Stream<DynamicTest> shortTier() {
        int runs = Integer.getInteger("redlease.repeat");
        Path out =
                Path.of(System.getProperty("redlease.figures.dir", "target"))
                        .resolve("reliability-repeat.txt");
        return IntStream.rangeClosed(1, runs)
                .mapToObj(
                        run ->
                                DynamicTest.dynamicTest(
                                        "run " + run + "/" + runs, () -> run(run, runs, out)));
    }

    private static void run(int run, int runs, Path out) {
        LauncherDiscoveryRequest request =
                LauncherDiscoveryRequestBuilder.request()
                        .selectors(selectPackage(ShortTierRepeat.class.getPackageName()))
                        .filters(
                                ClassNameFilter.excludeClassNamePatterns(
                                        ShortTierRepeat.class.getName()),
                                TagFilter.excludeTags("core-defect"))
                        .configurationParameter(
                                "junit.jupiter.execution.timeout.default",
                                System.getProperty("redlease.test.timeout", "5 m"))
                        .build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        long start = System.nanoTime();
        LauncherFactory.create().execute(request, listener);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        TestExecutionSummary summary = listener.getSummary();
        List<String> failed = new ArrayList<>();
        summary.getFailures()
                .forEach(
                        f ->
                                failed.add(
                                        f.getTestIdentifier().getDisplayName()
                                                + ": "
                                                + f.getException()));
        String line =
                String.format(
                        "run %d/%d: %d tests, %d succeeded, %d failed, %d skipped, %d s%s%n",
                        run,
                        runs,
                        summary.getTestsFoundCount(),
                        summary.getTestsSucceededCount(),
                        summary.getTotalFailureCount(),
                        summary.getTestsSkippedCount(),
                        took.toSeconds(),
                        failed.isEmpty() ? "" : " " + failed);
        System.out.print("[redlease-reliability] " + line);
        append(out, line);
        StringWriter details = new StringWriter();
        summary.printFailuresTo(new PrintWriter(details), 30);
        assertThat(summary.getTotalFailureCount()).as(details.toString()).isZero();
        // The package's own tests, not an empty selection (this class is not among them).
        assertThat(summary.getTestsSucceededCount()).isGreaterThan(50);
    }

    private static void append(Path out, String line) {
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(
                    out,
                    line,
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
