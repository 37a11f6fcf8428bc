package io.redlease.core;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/** Notifies several observers in turn; one that throws is logged and skipped. */
final class CompositeObserver implements Observer {

    private static final Log logger = LogFactory.getLog(Observer.class);

    private final List<Observer> observers;

    CompositeObserver(List<Observer> observers) {
        this.observers = observers;
    }

    @Override
    public void onElected(long token) {
        each(observer -> observer.onElected(token), "onElected");
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        each(observer -> observer.onSteppedDown(reason), "onSteppedDown");
    }

    @Override
    public void onFollower(@Nullable String holder) {
        each(observer -> observer.onFollower(holder), "onFollower");
    }

    @Override
    public void onFollower() {
        each(Observer::onFollower, "onFollower");
    }

    @Override
    public void onError(Operation operation, Throwable error) {
        each(observer -> observer.onError(operation, error), "onError");
    }

    @Override
    public void onFencedWrite(boolean applied, Duration duration) {
        each(observer -> observer.onFencedWrite(applied, duration), "onFencedWrite");
    }

    @Override
    public void onRoundTrip(Operation operation, Duration duration, boolean succeeded) {
        each(observer -> observer.onRoundTrip(operation, duration, succeeded), "onRoundTrip");
    }

    private void each(Consumer<Observer> callback, String method) {
        for (Observer observer : observers) {
            try {
                callback.accept(observer);
            } catch (VirtualMachineError error) {
                throw error;
            } catch (Throwable ex) {
                logger.warn("redlease: observer " + observer + " failed in " + method, ex);
            }
        }
    }
}
