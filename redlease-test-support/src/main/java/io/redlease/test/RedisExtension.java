package io.redlease.test;

import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.opentest4j.TestAbortedException;

/**
 * A JUnit 5 extension that injects {@link RedisServer} parameters into test classes.
 *
 * <p>Use it with {@code @ExtendWith(RedisExtension.class)}. A parameter of type {@link RedisServer}
 * on a test method, lifecycle method or constructor gets the server shared by the test class:
 * started on first use, closed after the class, and shared with its {@code @Nested} classes. It is
 * not flushed between tests, so tests use unique key names. A parameter annotated {@link Dedicated}
 * gets a fresh server of its own, closed when the test method ends; use that for tests that stop,
 * kill, pause or restart it.
 *
 * <p>Where the servers come from is described in {@link RedisServer#start()}. When {@value
 * RedisServer#URL_ENV} is set, a test whose {@link Dedicated} parameter asks for options that an
 * external server cannot honour is aborted, not failed.
 */
public final class RedisExtension implements ParameterResolver, BeforeEachCallback {

    private static final Namespace NAMESPACE = Namespace.create(RedisExtension.class);
    private static final String SHARED_KEY = "shared";

    /** Creates the extension; JUnit calls this. */
    public RedisExtension() {}

    /**
     * Returns whether the parameter is a {@link RedisServer}.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current extension context
     * @return {@code true} for a {@link RedisServer} parameter
     */
    @Override
    public boolean supportsParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == RedisServer.class;
    }

    /**
     * Returns the class's shared server, or a fresh one for a {@link Dedicated} parameter.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current extension context
     * @return a running server
     */
    @Override
    public Object resolveParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext) {
        Optional<Dedicated> dedicated = parameterContext.findAnnotation(Dedicated.class);
        if (dedicated.isPresent()) {
            RedisServer.Options options = options(dedicated.get());
            DedicatedKey key =
                    new DedicatedKey(
                            parameterContext.getDeclaringExecutable(), parameterContext.getIndex());
            return extensionContext
                    .getStore(NAMESPACE)
                    .computeIfAbsent(key, k -> RedisServer.start(options), RedisServer.class);
        }
        return outermostClassContext(extensionContext)
                .getStore(NAMESPACE)
                .computeIfAbsent(SHARED_KEY, k -> RedisServer.start(), RedisServer.class);
    }

    /**
     * Aborts the test if it asks for a dedicated server with options while {@value
     * RedisServer#URL_ENV} points at an external server.
     *
     * @param context the test's extension context
     */
    @Override
    public void beforeEach(ExtensionContext context) {
        String url = System.getenv(RedisServer.URL_ENV);
        if (url == null || url.isBlank()) {
            return;
        }
        Optional<Method> method = context.getTestMethod();
        if (method.isEmpty()) {
            return;
        }
        for (Parameter parameter : method.get().getParameters()) {
            Dedicated dedicated = parameter.getAnnotation(Dedicated.class);
            if (dedicated != null && !options(dedicated).isDefault()) {
                throw new TestAbortedException(
                        "This test needs a redis-server started by the fixture with "
                                + options(dedicated)
                                + ", but "
                                + RedisServer.URL_ENV
                                + " points at an external server");
            }
        }
    }

    static RedisServer.Options options(Dedicated dedicated) {
        RedisServer.Options options =
                RedisServer.Options.defaults().appendOnly(dedicated.appendOnly());
        if (!dedicated.appendFsync().isEmpty()) {
            options = options.appendFsync(dedicated.appendFsync());
        }
        if (!dedicated.requirePass().isEmpty()) {
            options = options.requirePass(dedicated.requirePass());
        }
        if (dedicated.extraArgs().length > 0) {
            options = options.extraArgs(dedicated.extraArgs());
        }
        return options;
    }

    private static ExtensionContext outermostClassContext(ExtensionContext context) {
        ExtensionContext found = context.getRoot();
        for (@Nullable ExtensionContext current = context;
                current != null;
                current = current.getParent().orElse(null)) {
            if (current.getTestClass().isPresent() && current.getTestMethod().isEmpty()) {
                found = current;
            }
        }
        return found;
    }

    private record DedicatedKey(Executable executable, int index) {}
}
