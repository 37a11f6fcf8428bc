package io.redlease.core;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Work of a term that outlives the call that starts it: a reactive subscription, or a stage that
 * completes later. Each holds its admission to the term's run (so stopping waits for it) until it
 * is over, and is cancelled when the term ends if it asks to be; it leaves nothing with the term
 * once it is over.
 */
final class TermWork {

    private TermWork() {}

    static <T> Flux<T> reactive(
            Term term, CallGate gate, Supplier<? extends Publisher<T>> work, boolean cancelOnEnd) {
        return Flux.deferContextual(
                context -> {
                    // Work of this term already (a call bound to the subscribing thread, or the
                    // subscription it is part of) holds the admission: as a nested call does.
                    boolean nested =
                            BoundTerms.isBound(term)
                                    || BoundTerms.of(term.elector(), context) == term;
                    CallGate.Entry entry = nested ? null : gate.enter(String.valueOf(work));
                    if (!nested && entry == null) {
                        return Flux.error(term.notActive());
                    }
                    Runnable exit = entry == null ? () -> {} : once(() -> gate.exit(entry));
                    Publisher<T> publisher;
                    try {
                        publisher = assemble(term, work);
                    } catch (RuntimeException | Error ex) {
                        exit.run();
                        return Flux.error(ex);
                    }
                    Flux<T> flux = Flux.from(publisher);
                    if (cancelOnEnd) {
                        AtomicBoolean cut = new AtomicBoolean();
                        flux =
                                flux.takeUntilOther(ended(term).doOnSuccess(done -> cut.set(true)))
                                        .concatWith(
                                                Mono.defer(
                                                        () ->
                                                                cut.get()
                                                                        ? Mono.error(
                                                                                new TermEndedException(
                                                                                        term, null))
                                                                        : Mono.empty()))
                                        // A body that fails as it is cancelled was cut short.
                                        .onErrorMap(
                                                failure ->
                                                        term.endReason().isPresent()
                                                                && !(failure
                                                                        instanceof
                                                                        TermEndedException),
                                                failure -> new TermEndedException(term, failure));
                    }
                    return flux.contextWrite(inner -> BoundTerms.inContext(inner, term))
                            .doFinally(signal -> exit.run());
                });
    }

    /** Obtains the publisher with the term bound to the subscribing thread. */
    private static <T> Publisher<T> assemble(Term term, Supplier<? extends Publisher<T>> work) {
        BoundTerms.Frame frame = BoundTerms.bind(term, false);
        if (frame == null) {
            throw term.notActive();
        }
        try {
            return work.get();
        } finally {
            BoundTerms.unbind(frame);
        }
    }

    /** Signals when the term ends; cancelled, it leaves nothing with the term. */
    private static Mono<Boolean> ended(Term term) {
        return Mono.create(
                sink -> {
                    Runnable remove = term.onEnd(() -> sink.success(Boolean.TRUE));
                    sink.onDispose(remove::run);
                });
    }

    static <T, S extends CompletionStage<T>> @Nullable S async(
            Term term, CallGate gate, Callable<S> work, boolean cancelOnEnd) throws Exception {
        if (BoundTerms.isBound(term)) {
            if (!term.isActive()) {
                throw term.notActive();
            }
            return BoundTerms.reenter(term, work);
        }
        CallGate.Entry entry = gate.enter(String.valueOf(work));
        if (entry == null) {
            throw term.notActive();
        }
        Runnable exit = once(() -> gate.exit(entry));
        S stage;
        try {
            BoundTerms.Frame frame = BoundTerms.bind(term, cancelOnEnd);
            if (frame == null) {
                throw term.notActive();
            }
            try {
                stage = work.call();
            } finally {
                BoundTerms.unbind(frame);
            }
        } catch (Exception | Error ex) {
            exit.run();
            throw ex;
        }
        if (stage == null) {
            exit.run();
            return null;
        }
        Runnable remove =
                cancelOnEnd && stage instanceof Future<?> future
                        ? term.onEnd(() -> future.cancel(true))
                        : () -> {};
        stage.whenComplete(
                (result, failure) -> {
                    remove.run();
                    exit.run();
                });
        return stage;
    }

    private static Runnable once(Runnable action) {
        AtomicBoolean done = new AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                action.run();
            }
        };
    }
}
