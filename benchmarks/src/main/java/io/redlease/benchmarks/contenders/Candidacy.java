package io.redlease.benchmarks.contenders;

/** One process contending for one election; contending starts when it is created. */
public interface Candidacy {

    /**
     * Steps down gracefully if leading (releasing the lease), stops contending, and returns when
     * that is done.
     */
    void stop() throws InterruptedException;

    /** What a candidacy reports; called from the library's own threads. */
    interface Listener {

        /** This process won the election. */
        void elected(String name);

        /** This process found the lease held by another process (reported once). */
        void following(String name);

        /** The library reported an error. */
        void error(String name, Throwable error);
    }
}
