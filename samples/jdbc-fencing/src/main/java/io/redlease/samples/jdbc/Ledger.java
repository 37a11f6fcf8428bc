package io.redlease.samples.jdbc;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;

/** The ledger. */
public interface Ledger extends JpaRepository<LedgerEntry, Long> {

    List<LedgerEntry> findByAccountId(String accountId);
}
