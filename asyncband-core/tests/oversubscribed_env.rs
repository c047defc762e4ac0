//! `ASYNCBAND_OVERSUBSCRIBED` decides, for the whole process, whether a
//! blocking receive judges the machine oversubscribed, instead of the run
//! queue. A file of its own: the variable is read once per process, so it
//! must be set before anything in the process has read it.

use asyncband_core::wait::oversubscribed_now;

#[test]
#[cfg_attr(miri, ignore = "Miri's runs do not read the variable")]
fn the_environment_decides_oversubscription_once_for_the_process() {
    // SAFETY: the only test of this binary, so no other thread of the
    // process reads or writes the environment while it runs.
    unsafe { std::env::set_var("ASYNCBAND_OVERSUBSCRIBED", "always") };
    assert!(
        oversubscribed_now(),
        "`always` holds whatever the run queue says"
    );
    // SAFETY: as above.
    unsafe { std::env::set_var("ASYNCBAND_OVERSUBSCRIBED", "never") };
    assert!(
        oversubscribed_now(),
        "read once: a later change has no effect"
    );
}
