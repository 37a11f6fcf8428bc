package io.redlease.test;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.activemq.artemis.api.core.QueueConfiguration;
import org.apache.activemq.artemis.api.core.RoutingType;
import org.apache.activemq.artemis.api.core.SimpleString;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.ActiveMQServer;
import org.apache.activemq.artemis.core.server.Queue;
import org.apache.activemq.artemis.core.server.ServerSession;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;
import org.apache.activemq.artemis.core.server.plugin.ActiveMQServerSessionPlugin;
import org.apache.activemq.artemis.core.settings.impl.AddressSettings;

/**
 * A real ActiveMQ Artemis broker for the tests, embedded in the test JVM with a TCP acceptor on a
 * free loopback port (never Artemis' own 61616), so application JVMs connect to it as to any broker
 * ({@link #url()}, for {@code spring.artemis.broker-url} in native mode).
 *
 * <p>The broker keeps messages in memory (no journal), accepts any user (security off), and sends a
 * message that exhausted its delivery attempts (or expired) to the queue {@value #DEAD_LETTERS},
 * where a test can count it ({@link #messageCount(String)}) instead of the broker dropping it.
 * Tests take queues of their own from {@link #newQueue(String)}. {@link #shared()} gives one broker
 * to the whole test JVM; it ends with the JVM, its directory deleted.
 *
 * <p>It needs {@code org.apache.activemq:artemis-server} on the test class path (an optional
 * dependency of this module).
 */
public final class ArtemisServer implements AutoCloseable {

    /** The queue of messages whose delivery attempts ran out. */
    public static final String DEAD_LETTERS = "DLQ";

    /** Artemis' default port, which the tests never use. */
    static final int DEFAULT_PORT = 61616;

    private static final String LOOPBACK = "127.0.0.1";

    private static final AtomicLong NAMES = new AtomicLong();

    private static final SharedServer<ArtemisServer> SHARED =
            new SharedServer<>(ArtemisServer::start, ArtemisServer::isClosed);

    private final EmbeddedActiveMQ broker;

    private final Workspace workspace;

    private final int port;

    private final Map<String, AtomicLong> sessionsByUser;

    private volatile boolean closed;

    private ArtemisServer(
            EmbeddedActiveMQ broker,
            Workspace workspace,
            int port,
            Map<String, AtomicLong> sessionsByUser) {
        this.broker = broker;
        this.workspace = workspace;
        this.port = port;
        this.sessionsByUser = sessionsByUser;
    }

    /**
     * Returns the broker shared by the whole test JVM, starting it on first use; tests must not
     * close it, and use queues of their own.
     *
     * @return the running shared broker
     */
    public static ArtemisServer shared() {
        return SHARED.get();
    }

    /**
     * Starts a broker of the caller's own, to close when done.
     *
     * @return a running broker
     */
    public static ArtemisServer start() {
        Workspace workspace = Workspace.create("redlease-artemis");
        int port = Ports.freeLoopbackPort();
        if (port == DEFAULT_PORT) {
            port = Ports.freeLoopbackPort();
        }
        Map<String, AtomicLong> sessionsByUser = new ConcurrentHashMap<>();
        EmbeddedActiveMQ broker = new EmbeddedActiveMQ();
        try {
            broker.setConfiguration(configuration(workspace, port, sessionsByUser));
            broker.start();
            broker.getActiveMQServer()
                    .createQueue(
                            QueueConfiguration.of(DEAD_LETTERS)
                                    .setRoutingType(RoutingType.ANYCAST)
                                    .setDurable(true));
        } catch (Exception ex) {
            stopQuietly(broker);
            workspace.close();
            throw new IllegalStateException(
                    "Could not start the embedded Artemis broker on port " + port, ex);
        }
        return new ArtemisServer(broker, workspace, port, sessionsByUser);
    }

    private static Configuration configuration(
            Workspace workspace, int port, Map<String, AtomicLong> sessionsByUser)
            throws Exception {
        String dir = workspace.dir().toString();
        Configuration configuration =
                new ConfigurationImpl()
                        .setName("redlease-test-" + port)
                        .setPersistenceEnabled(false)
                        .setSecurityEnabled(false)
                        .setJMXManagementEnabled(false)
                        .setJournalDirectory(dir + "/journal")
                        .setBindingsDirectory(dir + "/bindings")
                        .setPagingDirectory(dir + "/paging")
                        .setLargeMessagesDirectory(dir + "/large-messages")
                        .addAcceptorConfiguration("tcp", "tcp://" + LOOPBACK + ":" + port);
        configuration.setBrokerInstance(workspace.dir().toFile());
        configuration.addAddressSetting(
                "#",
                new AddressSettings()
                        .setDeadLetterAddress(SimpleString.of(DEAD_LETTERS))
                        .setExpiryAddress(SimpleString.of(DEAD_LETTERS))
                        .setAutoCreateDeadLetterResources(false));
        configuration.registerBrokerPlugin(
                new ActiveMQServerSessionPlugin() {
                    @Override
                    public void afterCreateSession(ServerSession session) {
                        String user = session.getUsername();
                        sessionsByUser
                                .computeIfAbsent(user == null ? "" : user, key -> new AtomicLong())
                                .incrementAndGet();
                    }
                });
        return configuration;
    }

    /** Returns the broker's host, {@code 127.0.0.1}. */
    public String host() {
        return LOOPBACK;
    }

    /** Returns the port of the broker's TCP acceptor. */
    public int port() {
        return port;
    }

    /**
     * Returns the broker's URL for Artemis' JMS client: {@code tcp://127.0.0.1:<port>}, to which a
     * client may add its own parameters ({@code ?consumerWindowSize=0}).
     */
    public String url() {
        return "tcp://" + LOOPBACK + ":" + port;
    }

    /**
     * Creates a queue of the test's own (an anycast address and a queue of the same name, not
     * deleted when its last consumer leaves) and returns its name.
     *
     * @param prefix the start of the name
     * @return the queue's name, {@code <prefix>-<n>}
     */
    public String newQueue(String prefix) {
        String name = prefix + "-" + NAMES.incrementAndGet() + "-" + System.nanoTime();
        try {
            broker.getActiveMQServer()
                    .createQueue(
                            QueueConfiguration.of(name)
                                    .setRoutingType(RoutingType.ANYCAST)
                                    .setDurable(true));
        } catch (Exception ex) {
            throw new IllegalStateException("Could not create the queue " + name, ex);
        }
        return name;
    }

    /**
     * Deletes a queue and its messages.
     *
     * @param name the queue's name
     */
    public void deleteQueue(String name) {
        try {
            broker.getActiveMQServer().destroyQueue(SimpleString.of(name), null, false, true);
        } catch (Exception ex) {
            throw new IllegalStateException("Could not delete the queue " + name, ex);
        }
    }

    /**
     * Returns the number of messages in a queue, delivered but not acknowledged ones included.
     *
     * @param name the queue's name
     * @return its message count
     */
    public long messageCount(String name) {
        Queue queue = broker.getActiveMQServer().locateQueue(SimpleString.of(name));
        if (queue == null) {
            throw new IllegalArgumentException("no queue " + name);
        }
        return queue.getMessageCount();
    }

    /**
     * Returns how many sessions clients logged in as this user have opened since the broker started
     * (a JMS connection opens one of its own, each JMS session one more).
     *
     * @param user the user name the client's connection factory gives
     * @return the count, 0 if none
     */
    public long sessionsOpenedBy(String user) {
        AtomicLong count = sessionsByUser.get(user);
        return count == null ? 0 : count.get();
    }

    /** Returns the broker itself, for levers the methods above do not offer. */
    public ActiveMQServer server() {
        return broker.getActiveMQServer();
    }

    boolean isClosed() {
        return closed;
    }

    /** Stops the broker and deletes its directory. Calling it again does nothing. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopQuietly(broker);
        workspace.close();
    }

    private static void stopQuietly(EmbeddedActiveMQ broker) {
        try {
            broker.stop();
        } catch (Exception ex) {
            // The broker is in this JVM: whatever it holds ends with it.
        }
    }

    @Override
    public String toString() {
        return "Artemis broker at " + url();
    }
}
