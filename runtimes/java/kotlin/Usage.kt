// What an Android app written in Kotlin does with the runtime: compiled by test.sh with kotlinc
// (when installed) against build/sessionpolicy.jar, then run. Nullable accessors are Kotlin
// nullable types (the jar names androidx.annotation.Nullable / NonNull).
import dev.sessionpolicy.Decision
import dev.sessionpolicy.Event
import dev.sessionpolicy.EventKind
import dev.sessionpolicy.Keystore
import dev.sessionpolicy.Network
import dev.sessionpolicy.PolicyMachine
import dev.sessionpolicy.SessionState
import dev.sessionpolicy.Timestamp
import dev.sessionpolicy.MachineUpdater
import dev.sessionpolicy.SignedMachine
import dev.sessionpolicy.TrustedKey
import dev.sessionpolicy.UpdateResult
import java.io.File

fun main(args: Array<String>) {
    val machine = PolicyMachine.fromDocument(File(args[0]).readBytes())
    val stored: String? = null
    val state = stored?.let { SessionState.fromJson(it) } ?: SessionState.signedOut()
    val login = Event.builder(EventKind.IDP_LOGIN_SUCCEEDED, Timestamp.parse("2026-03-01T09:00:00Z"))
        .user("alice").deviceId("phone-1").authMode(dev.sessionpolicy.AuthMode.BIOMETRIC)
        .keystore(Keystore.HARDWARE).network(Network.ONLINE).build()
    val signedIn = machine.evaluate(state, login)
    val launch = Event.builder(EventKind.LAUNCH, Timestamp.parse("2026-03-02T09:00:00Z"))
        .network(Network.OFFLINE).user("alice").deviceId("phone-1").keystore(Keystore.HARDWARE).build()
    val outcome = machine.evaluate(signedIn.state(), launch)
    val user: String? = outcome.state().user()          // nullable: the state may name no user
    val decision: Decision? = outcome.decision()        // null for events that need nothing
    val what = when (decision) {
        Decision.ALLOW -> "allow " + outcome.scope()
        Decision.REQUIRE_BIOMETRIC -> "require_biometric " + outcome.scope()
        Decision.IDP_LOGIN -> "idp_login " + outcome.authMode()
        Decision.WIPE -> "wipe"
        null -> "nothing"
    }
    println("$what ${outcome.reason()} ${user ?: "-"} ${outcome.state().toJson().length}")

    // The signed-machine updater: a pinned key (the conformance suite's test key a), an envelope
    // refused, nothing held (current() is nullable).
    val pem = File(File(args[0]).absoluteFile.parentFile.parentFile, "keys/a.pub.pem").readText()
    val updater = MachineUpdater(machine.name(), listOf(TrustedKey.fromPem(pem)))
    val result = updater.offer("not an envelope".toByteArray(), System.currentTimeMillis())
    val held: SignedMachine? = updater.current()
    val code: String? = result.code()
    check(result.kind() == UpdateResult.Kind.REFUSED && held == null)
    println("update ${result.kind()} ${code ?: "-"}")
}
