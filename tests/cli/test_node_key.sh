# test_node_key.sh — `slaq cluster node-key` issues a node's key from the
# cluster secret as docs/protocol.md defines it (computed apart here with
# Python's hashlib and libsodium's Argon2id), writes it private, and
# refuses what it cannot issue with the reason.
. "$(dirname "$0")/lib.sh"

printf 'node-key-test-secret-1\n' >"$TMP/secret"
"$SLAQ" cluster node-key --secret-file "$TMP/secret" n1 >"$TMP/n1" 2>"$TMP/err"
check "node-key prints NODE:KEY" grep -qE '^n1:[0-9a-f]{64}$' "$TMP/n1"
want=$(python3 - <<'EOF'
import sys
sys.path.insert(0, "tests/e2e")
from agentlink import node_key
print("n1:" + node_key("node-key-test-secret-1", "n1").hex())
EOF
)
check "the key is BLAKE2b of the name under the secret's Argon2id key" \
  test "$(cat "$TMP/n1")" = "$want"
"$SLAQ" cluster node-key --secret-file "$TMP/secret" n2 >"$TMP/n2"
check "another node gets another key" \
  test "$(cut -d: -f2 "$TMP/n1")" != "$(cut -d: -f2 "$TMP/n2")"

# --out: mode 0600, also over a file that was readable by everyone.
printf 'old\n' >"$TMP/n1.key"
chmod 644 "$TMP/n1.key"
check_exit "node-key --out writes the key" 0 \
  "$SLAQ" cluster node-key --secret-file "$TMP/secret" --out "$TMP/n1.key" n1
check "the key file is mode 0600" test "$(stat -c %a "$TMP/n1.key")" = 600
check "the key file holds the printed key" cmp -s "$TMP/n1.key" "$TMP/n1"
# The default secret: DIR/agent.token.
mkdir "$TMP/dir"
cp "$TMP/secret" "$TMP/dir/agent.token"
"$SLAQ" cluster node-key --dir "$TMP/dir" n1 >"$TMP/n1b"
check "--dir DIR takes DIR/agent.token" cmp -s "$TMP/n1b" "$TMP/n1"

check_exit "a name that is no node's is refused" 2 \
  "$SLAQ" cluster node-key --secret-file "$TMP/secret" "../n1"
check_grep "... saying what a name may hold" "not a node name" "$TMP/err"
check_exit "no node name is a usage error" 2 \
  "$SLAQ" cluster node-key --secret-file "$TMP/secret"
check_exit "a missing secret is refused" 1 \
  "$SLAQ" cluster node-key --secret-file "$TMP/none" n1
check_grep "... naming the file" "cannot read the cluster secret" "$TMP/err"
printf 'short\n' >"$TMP/short"
check_exit "a secret under 8 characters is refused" 1 \
  "$SLAQ" cluster node-key --secret-file "$TMP/short" n1
check_exit "--out is node-key's only" 2 "$SLAQ" cluster status --out x
finish
