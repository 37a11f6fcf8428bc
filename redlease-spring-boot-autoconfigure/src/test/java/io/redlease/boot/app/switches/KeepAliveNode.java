package io.redlease.boot.app.switches;

import io.redlease.boot.event.FollowerEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@link LifecycleOnlyApplication} in a JVM of its own, without a web server: its main thread
 * returns once the application is ready, and a daemon thread (which keeps nothing alive) prints a
 * tick every 100 ms and closes the context when the file {@code test.stop-file} appears. Lines:
 * {@code DEMO|<epoch ms>|<node>|ready|}, {@code ...|following|} (the election found another
 * holder), {@code ...|tick|}, {@code ...|closing|}.
 */
public final class KeepAliveNode {

    private KeepAliveNode() {}

    public static void main(String[] args) {
        String node = argument(args, "--redlease.instance-id=");
        ConfigurableApplicationContext context =
                new SpringApplicationBuilder(LifecycleOnlyApplication.class)
                        .web(WebApplicationType.NONE)
                        .listeners(
                                new ApplicationListener<FollowerEvent>() {
                                    @Override
                                    public void onApplicationEvent(FollowerEvent event) {
                                        emit(node, "following");
                                    }
                                })
                        .run(args);
        Path stop = Path.of(context.getEnvironment().getRequiredProperty("test.stop-file"));
        emit(node, "ready");
        Thread ticker =
                new Thread(
                        () -> {
                            while (true) {
                                emit(node, "tick");
                                if (Files.exists(stop)) {
                                    emit(node, "closing");
                                    context.close();
                                    return;
                                }
                                try {
                                    Thread.sleep(100); // the tick rate, not synchronisation
                                } catch (InterruptedException ex) {
                                    return;
                                }
                            }
                        },
                        "ticker");
        ticker.setDaemon(true);
        ticker.start();
    }

    private static String argument(String[] args, String prefix) {
        for (String arg : args) {
            if (arg.startsWith(prefix)) {
                return arg.substring(prefix.length());
            }
        }
        throw new IllegalArgumentException("no " + prefix + " argument");
    }

    private static void emit(String node, String kind) {
        System.out.println("DEMO|" + System.currentTimeMillis() + "|" + node + "|" + kind + "|");
    }
}
