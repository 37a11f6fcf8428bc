package io.redlease.core;

import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.DigestUtils;

/**
 * A script whose text never changes: its SHA-1 is computed once, and reading it or the text takes
 * no lock. {@link DefaultRedisScript} takes two locks on every read of the SHA-1 (it allows the
 * source to change), and every call of a script reads it: threads writing through one fencer
 * contended there.
 */
final class FixedScript<T> extends DefaultRedisScript<T> {

    private final String text;

    private final String sha1;

    FixedScript(String text, Class<T> resultType) {
        super(text, resultType);
        this.text = text;
        this.sha1 = DigestUtils.sha1DigestAsHex(text);
    }

    @Override
    public String getSha1() {
        return sha1;
    }

    @Override
    public String getScriptAsString() {
        return text;
    }
}
