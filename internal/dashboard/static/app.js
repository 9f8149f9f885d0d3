// The dashboard's one script. Every page works without it; it only makes
// a page the browser restores from its back/forward cache (Back after a
// refund, Cache-Control: no-store notwithstanding) load again, so that it
// shows the payment as it is now rather than as it was when it was left.
addEventListener("pageshow", function (event) {
	if (event.persisted) {
		location.reload();
	}
});
