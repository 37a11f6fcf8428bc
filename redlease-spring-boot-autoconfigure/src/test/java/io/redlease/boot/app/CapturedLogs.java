package io.redlease.boot.app;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Records every event Logback lets through to the root logger, from any thread. Boot resets Logback
 * when the first application of the JVM starts, so the recorder is attached as an initializer of
 * each application (it attaches itself once per reset) and detached by {@link #close()}.
 */
final class CapturedLogs extends AppenderBase<ILoggingEvent>
        implements ApplicationContextInitializer<ConfigurableApplicationContext>, AutoCloseable {

    /** One logged event: its logger, level and formatted message. */
    record Line(String logger, String level, String message, String thread) {

        @Override
        public String toString() {
            return level + " [" + thread + "] " + logger + " - " + message;
        }
    }

    private final List<Line> lines = new CopyOnWriteArrayList<>();

    CapturedLogs() {
        setName("captured-logs-" + System.identityHashCode(this));
        attach();
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        attach();
    }

    private void attach() {
        Logger root = root();
        if (root.getAppender(getName()) == null) {
            setContext(root.getLoggerContext());
            start();
            root.addAppender(this);
        }
    }

    private static Logger root() {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        return context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    @Override
    protected void append(ILoggingEvent event) {
        lines.add(
                new Line(
                        event.getLoggerName(),
                        event.getLevel().toString(),
                        event.getFormattedMessage(),
                        event.getThreadName()));
    }

    /** Returns the lines logged so far by loggers under the given name. */
    List<Line> under(String loggerName) {
        return lines.stream()
                .filter(
                        line ->
                                line.logger().equals(loggerName)
                                        || line.logger().startsWith(loggerName + "."))
                .toList();
    }

    /** Returns the lines logged so far at WARN or ERROR by loggers under the given name. */
    List<Line> warnings(String loggerName) {
        return under(loggerName).stream()
                .filter(line -> line.level().equals("WARN") || line.level().equals("ERROR"))
                .toList();
    }

    @Override
    public void close() {
        root().detachAppender(this);
        stop();
    }
}
