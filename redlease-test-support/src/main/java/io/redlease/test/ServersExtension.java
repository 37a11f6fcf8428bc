package io.redlease.test;

import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that injects the JVM's shared {@link PostgresServer}, {@link MariaDbServer}
 * and {@link RabbitMqServer} into test methods, lifecycle methods and constructors.
 *
 * <p>Use it with {@code @ExtendWith(ServersExtension.class)}; a parameter of one of those types
 * gets {@code shared()}, started on first use and ended when the JVM exits. Tests share the server,
 * so they use table names, queue names or virtual hosts ({@link RabbitMqServer#newVirtualHost()})
 * of their own, and do not close it.
 */
public final class ServersExtension implements ParameterResolver {

    private static final Map<Class<?>, Supplier<?>> SERVERS =
            Map.of(
                    PostgresServer.class, PostgresServer::shared,
                    MariaDbServer.class, MariaDbServer::shared,
                    RabbitMqServer.class, RabbitMqServer::shared);

    /** Creates the extension; JUnit calls this. */
    public ServersExtension() {}

    /**
     * Returns whether the parameter is a {@link PostgresServer}, {@link MariaDbServer} or {@link
     * RabbitMqServer}.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current extension context
     * @return {@code true} for a server this extension provides
     */
    @Override
    public boolean supportsParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext) {
        return SERVERS.containsKey(parameterContext.getParameter().getType());
    }

    /**
     * Returns the shared server of the parameter's type.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current extension context
     * @return the running shared server
     */
    @Override
    public Object resolveParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext) {
        return SERVERS.get(parameterContext.getParameter().getType()).get();
    }
}
