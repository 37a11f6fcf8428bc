package io.redlease.samples.jdbc;

import io.redlease.core.LeadershipContext;
import io.redlease.jdbc.Fenced;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Credits the account and writes the ledger line in one JPA transaction, fenced by the caller's
 * term: if a newer leader has committed meanwhile, both writes are rolled back.
 */
@Service
public class Settlements {

    static final long AMOUNT = 10;

    private final Accounts accounts;

    private final Ledger ledger;

    private final LeadershipContext leadership;

    private final String accountId;

    public Settlements(
            Accounts accounts,
            Ledger ledger,
            LeadershipContext leadership,
            @Value("${sample.account:main}") String accountId) {
        this.accounts = accounts;
        this.ledger = ledger;
        this.leadership = leadership;
        this.accountId = accountId;
    }

    /**
     * Settles one credit under the calling thread's term.
     *
     * @param note a note stored on the ledger line
     * @return the ledger line
     * @throws io.redlease.jdbc.FencedOutException if a newer term has committed (rolled back)
     * @throws io.redlease.jdbc.UnfencedTransactionException if no term is bound (nothing ran)
     */
    // tag::fenced-transaction[]
    @Transactional
    @Fenced // or @Fenced("audit") for another election
    public LedgerEntry settle(String note) {
        long token = leadership.token().orElseThrow();
        Account account = accounts.findById(accountId).orElseGet(() -> new Account(accountId));
        account.credit(AMOUNT);
        accounts.save(account);
        return ledger.save(new LedgerEntry(accountId, AMOUNT, token, note));
    }

    // end::fenced-transaction[]

    public String accountId() {
        return accountId;
    }
}
