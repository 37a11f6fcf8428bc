package io.redlease.jdbc;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.time.Duration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A leader in a child JVM for {@link PausedLeaderTests}: wins the election, opens a fenced
 * transaction, writes a row, prints {@code WROTE <token>} and waits for a {@code commit} line on
 * standard input before committing; then prints {@code COMMITTED}, {@code REFUSED <token> <newer>}
 * or {@code FAILED <error>}.
 *
 * <p>Arguments: redis host, redis port, election name, JDBC URL, user, fence table, data table.
 */
public final class PausedLeaderMain {

    private PausedLeaderMain() {}

    public static void main(String[] args) throws Exception {
        LettuceConnectionFactory redis =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
        redis.afterPropertiesSet();
        redis.start();
        // A lease long enough to outlast this cold JVM's first transaction on a crowded machine
        // (a 1 s lease lapsed before the first write there); the test freezes the JVM past it.
        Elector elector =
                new Elector(
                        redis, ElectorConfig.builder(args[2]).ttl(Duration.ofSeconds(3)).build());
        SimpleDriverDataSource dataSource =
                new SimpleDriverDataSource(DriverManager.getDriver(args[3]), args[3], args[4], "");
        TransactionFencing fencing =
                new TransactionFencing(
                        new FenceTable(dataSource, args[5]),
                        new LeadershipContext(Elections.of(elector)));
        DataSourceTransactionManager transactionManager =
                new DataSourceTransactionManager(dataSource);
        transactionManager.addListener(new FencingTransactionListener(fencing));
        TransactionTemplate tx = new TransactionTemplate(transactionManager);
        JdbcClient jdbc = JdbcClient.create(dataSource);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        elector.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!elector.isLeader() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        Term term = elector.term().orElseThrow();
        try {
            term.execute(
                    () ->
                            tx.execute(
                                    status -> {
                                        fencing.fence();
                                        jdbc.sql(
                                                        "INSERT INTO "
                                                                + args[6]
                                                                + " (id, token) VALUES (?, ?)")
                                                .params("child", term.token())
                                                .update();
                                        System.out.println("WROTE " + term.token());
                                        System.out.flush();
                                        try {
                                            String line = in.readLine();
                                            if (!"commit".equals(line)) {
                                                throw new IllegalStateException("got " + line);
                                            }
                                        } catch (java.io.IOException ex) {
                                            throw new java.io.UncheckedIOException(ex);
                                        }
                                        return null;
                                    }),
                    false);
            System.out.println("COMMITTED");
        } catch (FencedOutException ex) {
            System.out.println("REFUSED " + ex.token() + " " + ex.newerToken());
        } catch (Exception ex) {
            System.out.println("FAILED " + ex);
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
