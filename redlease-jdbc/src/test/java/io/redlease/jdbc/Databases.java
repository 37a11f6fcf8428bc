package io.redlease.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** Data sources that change one thing about a real one, for the tests. */
final class Databases {

    private Databases() {}

    /** A data source whose metadata reports another database product. */
    static DataSource reportingProduct(DataSource dataSource, String product) {
        return new DelegatingDataSource(dataSource) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return proxy(
                        Connection.class,
                        connection,
                        (method, args) -> {
                            if (method.getName().equals("getMetaData")) {
                                DatabaseMetaData metaData = connection.getMetaData();
                                return proxy(
                                        DatabaseMetaData.class,
                                        metaData,
                                        (inner, innerArgs) ->
                                                inner.getName().equals("getDatabaseProductName")
                                                        ? product
                                                        : inner.invoke(metaData, innerArgs));
                            }
                            return method.invoke(connection, args);
                        });
            }
        };
    }

    /** A data source whose connections start with auto-commit off, as some pools are set up. */
    static DataSource withoutAutoCommit(DataSource dataSource) {
        return new DelegatingDataSource(dataSource) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                connection.setAutoCommit(false);
                return connection;
            }
        };
    }

    /** A data source that records the SQL of every statement its connections prepare or run. */
    static DataSource recording(DataSource dataSource, List<String> statements) {
        return new DelegatingDataSource(dataSource) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                return proxy(
                        Connection.class,
                        connection,
                        (method, args) -> {
                            if ((method.getName().equals("prepareStatement")
                                            || method.getName().equals("prepareCall"))
                                    && args != null
                                    && args.length > 0
                                    && args[0] instanceof String sql) {
                                statements.add(sql);
                            }
                            return method.invoke(connection, args);
                        });
            }
        };
    }

    /** A method handler that may throw what the real method threw. */
    @FunctionalInterface
    interface Handler {
        Object handle(java.lang.reflect.Method method, Object[] args) throws Throwable;
    }

    @SuppressWarnings("unchecked")
    static <T> T proxy(Class<T> type, T target, Handler handler) {
        return (T)
                Proxy.newProxyInstance(
                        Databases.class.getClassLoader(),
                        new Class<?>[] {type},
                        (proxy, method, args) -> {
                            try {
                                return handler.handle(method, args);
                            } catch (InvocationTargetException ex) {
                                throw ex.getTargetException();
                            }
                        });
    }
}
