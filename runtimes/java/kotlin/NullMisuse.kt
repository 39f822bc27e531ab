// Must NOT compile: test.sh checks that kotlinc refuses it, which shows that Kotlin sees the
// runtime's @Nullable accessors as nullable types (not platform types).
import dev.sessionpolicy.SessionState

fun main() {
    val user: String = SessionState.signedOut().user()
    println(user)
}
