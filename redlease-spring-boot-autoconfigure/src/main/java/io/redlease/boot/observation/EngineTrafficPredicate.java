package io.redlease.boot.observation;

import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.tracing.LettuceObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationPredicate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.redlease.core.EngineTraffic;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Declines Lettuce's observations of redlease's own background Redis commands ({@link
 * EngineTraffic}): acquires, renewals, releases, heartbeats, leader information, partition
 * membership and the balancing's read of the partitions' leases, once-per-slot ledger claims and
 * reads, and the subscription to release notifications. Without it each such command is a trace of
 * its own in a traced application (a span with no parent) and a sample of the {@code lettuce}
 * timers. Fenced writes are not declined: made inside a traced leader-only run they are children of
 * its span.
 *
 * <p>Lettuce sets the parent of a command's observation only after predicates ran, so the predicate
 * knows the command by what it sends: the script's SHA-1 (or body), the channel, and for {@code
 * MGET} its keys (every one a lease key, {@code <name>:leader}).
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
            case "EVALSHA" -> {
                String sha = args.getFirstString();
                return sha == null || !EngineTraffic.isEngineScript(sha);
            }
            case "EVAL" -> {
                // The script goes as bytes (the fallback after NOSCRIPT): read it back.
                List<String> arguments = arguments(args);
                return arguments.isEmpty() || !EngineTraffic.isEngineScript(arguments.get(0));
            }
            case "MGET" -> {
                return !EngineTraffic.isEngineRead(arguments(args));
            }
            case "SUBSCRIBE", "UNSUBSCRIBE" -> {
                // A pub/sub command's channels are not its first key (Lettuce's pub/sub arguments
                // have none): read them from its encoding. An UNSUBSCRIBE of every channel names
                // none and cannot be told apart.
                List<String> channels = arguments(args);
                return channels.isEmpty()
                        || !channels.stream().allMatch(EngineTraffic::isEngineChannel);
            }
            default -> {
                return true;
            }
        }
    }

    /**
     * Returns a command's arguments as text, read back from their encoding (each a RESP bulk
     * string); empty when they cannot be read.
     */
    static List<String> arguments(CommandArgs<?, ?> args) {
        ByteBuf buffer = Unpooled.buffer();
        try {
            args.encode(buffer);
            List<String> values = new ArrayList<>();
            while (buffer.isReadable()) {
                if (buffer.readByte() != '$') {
                    return List.of();
                }
                int length = 0;
                for (byte digit = buffer.readByte(); digit != '\r'; digit = buffer.readByte()) {
                    length = length * 10 + (digit - '0');
                }
                buffer.skipBytes(1);
                values.add(buffer.readCharSequence(length, StandardCharsets.UTF_8).toString());
                buffer.skipBytes(2);
            }
            return values;
        } catch (RuntimeException ex) {
            return List.of();
        } finally {
            buffer.release();
        }
    }
}
