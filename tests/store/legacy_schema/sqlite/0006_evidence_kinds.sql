-- The person's words are the evidence. Mirrors schema/postgres/0006_evidence_kinds.sql.
-- Kinds 'reply' and 'question' are kept, listed and exported, but never searched (bot/core/kinds.py:
-- NOT_EVIDENCE). Memories stored before this release get them here; new ones get them when stored.
-- Numbered 0006, not 0005: the two land from separate branches, and neither depends on the other.

-- The bot's replies (memories of assistant turns), and lines imported as the assistant's.
UPDATE memories SET kind = 'reply'
WHERE kind = 'turn' AND source_turn_id IN (SELECT id FROM turns WHERE role = 'assistant');
UPDATE memories SET kind = 'reply' WHERE kind = 'imported' AND speaker = 'assistant';

-- Messages and imported lines that only ask: kinds.classify's rule (every sentence ends in '?', at
-- most 280 characters), written in SQL: a '.', '!' or '…' before a space or a line break ends a
-- statement. The assistant's lines are replies by now.
UPDATE memories SET kind = 'question'
WHERE kind IN ('turn', 'imported')
  AND (speaker IS NULL OR speaker <> 'assistant')
  AND length(text) <= 280
  AND text LIKE '%?'
  AND text NOT LIKE '%. %' AND text NOT LIKE '%! %' AND text NOT LIKE '%… %'
  AND text NOT LIKE '%.' || char(10) || '%' AND text NOT LIKE '%!' || char(10) || '%'
  AND text NOT LIKE '%…' || char(10) || '%';
