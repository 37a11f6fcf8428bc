package io.redlease.boot.observation;

import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.tracing.LettuceObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationPredicate;
import io.redlease.core.EngineTraffic;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Declines Lettuce's observations of redlease's own background Redis commands ({@link
 * EngineTraffic}): acquires, renewals, releases, heartbeats, leader information, partition
 * membership, ledger claims and the subscription to release notifications. Without it each such
 * command is a trace of its own in a traced application (a span with no parent) and a sample of the
 * {@code lettuce} timers. Fenced writes are not declined: made inside a traced leader-only run they
 * are children of its span.
 *
 * <p>Lettuce sets the parent of a command's observation only after predicates ran, so the predicate
 * knows the command by what it sends: the script's SHA-1 (or body) and the channel.
 */
public class EngineTrafficPredicate implements ObservationPredicate {

    @Override
    public boolean test(String name, Observation.Context context) {
        if (!(context instanceof LettuceObservationContext lettuce) || !lettuce.hasCommand()) {
            return true;
        }
        RedisCommand<?, ?, ?> command = lettuce.getRequiredCommand();
        CommandArgs<?, ?> args = command.getArgs();
        if (args == null) {
            return true;
        }
        String type = command.getType().toString();
        switch (type) {
            case "EVALSHA", "EVAL" -> {
                String first = args.getFirstString();
                return first == null || !EngineTraffic.isEngineScript(first);
            }
            case "SUBSCRIBE", "UNSUBSCRIBE" -> {
                ByteBuffer channel = args.getFirstEncodedKey();
                return channel == null
                        || !EngineTraffic.isEngineChannel(
                                StandardCharsets.UTF_8.decode(channel.duplicate()).toString());
            }
            default -> {
                return true;
            }
        }
    }
}
