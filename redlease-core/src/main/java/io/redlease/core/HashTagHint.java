package io.redlease.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Says once per election name, at INFO, that a name without a hash tag needs one behind a cluster
 * proxy. A proxy (Envoy, twemproxy, a Redis Enterprise or managed cluster endpoint) looks like a
 * single server to the client, so the startup check that refuses such a name on a Redis Cluster
 * connection cannot see it, and the multi-key scripts fail with {@code CROSSSLOT} at run time.
 */
final class HashTagHint {

    private static final Log logger = LogFactory.getLog("io.redlease.election");

    private static final Set<String> told = ConcurrentHashMap.newKeySet();

    private HashTagHint() {}

    /** Logs the hint for a name without a hash tag, once per name in this JVM. */
    static void forName(String name) {
        if (!Elector.hasHashTag(name) && told.add(name) && logger.isInfoEnabled()) {
            logger.info(
                    "redlease: election '"
                            + name
                            + "' has no hash tag; fine on this connection, but behind a Redis"
                            + " Cluster proxy its scripts fail with CROSSSLOT: name it '{"
                            + name
                            + "}' there");
        }
    }
}
