package i18n

import "github.com/leaselab/leaselab/wasm/said"

// The words of the sign-in, join and workshop pages (web/api/auth). A sentence that wraps a name in
// markup is split where the name goes, since the languages put it in different places.
var _ = said.Register(map[string]Text{
	"auth.lang":                    {En: "中文", Zh: "English"},
	"auth.langTitle":               {En: "阅读中文版", Zh: "Read this page in English"},
	"auth.signin.title":            {En: "Sign in", Zh: "登录"},
	"auth.signin.needed":           {En: "This leaselab needs a sign-in: open the join link the instructor gave you.", Zh: "这个 leaselab 需要登录：请打开讲师给你的加入链接。"},
	"auth.join.invalid":            {En: "This join link is not valid. Ask the instructor for yours.", Zh: "这个加入链接无效。请向讲师索取你自己的链接。"},
	"auth.join.title":              {En: "Join", Zh: "加入"},
	"auth.join.asPre":              {En: "Join the workshop as ", Zh: "以 "},
	"auth.join.asTheInstructor":    {En: "Join the workshop as the ", Zh: "以"},
	"auth.join.asTheInstructorEnd": {En: ": you may write in every namespace.", Zh: "的身份加入工作坊：你可以在每个命名空间中写入。"},
	"auth.join.instructor":         {En: ", the instructor: you may write in every namespace.", Zh: " 的身份（讲师）加入工作坊：你可以在每个命名空间中写入。"},
	"auth.join.nsPre":              {En: ", writing in the namespace ", Zh: " 的身份加入工作坊，在命名空间 "},
	"auth.join.nsMid":              {En: " (and in ", Zh: "（以及 "},
	"auth.join.nsPost":             {En: ").", Zh: "）中写入。"},
	"auth.join.end":                {En: ".", Zh: " 的身份加入工作坊。"},
	"auth.join.button":             {En: "Join", Zh: "加入"},
	"auth.join.stay":               {En: "This browser will stay signed in as %s for a week, in place of any earlier sign-in. Not you? Close this page.", Zh: "这个浏览器将以 %s 的身份保持登录一周，并取代之前的任何登录。不是你？请关闭此页面。"},
	"auth.ws.title":                {En: "Workshop", Zh: "工作坊"},
	"auth.ws.joinAt":               {En: "Participants join at ", Zh: "参与者的加入地址是 "},
	"auth.ws.lead":                 {En: ": each scans their QR code or opens their join link; kubectl users download their kubeconfig. Participants read everything and write in their own namespace and in ", Zh: "：每人扫描自己的二维码或打开自己的加入链接；使用 kubectl 的人下载自己的 kubeconfig。参与者可以读取一切，并在自己的命名空间和 "},
	"auth.ws.leadEnd":              {En: ".", Zh: " 中写入。"},
	"auth.ws.loopback":             {En: "These links use a loopback address: participants cannot reach it. Open this page through the address they use (or start with --public-url).", Zh: "这些链接使用的是回环地址：参与者无法访问。请通过参与者使用的地址打开本页（或以 --public-url 启动）。"},
	"auth.ws.dashboard":            {En: "Dashboard", Zh: "仪表盘"},
	"auth.nav.scenarios":           {En: "Scenarios", Zh: "场景"},
	"auth.ws.joined":               {En: "%d of %d participants have joined (reload to see who came since).", Zh: "%d / %d 位参与者已加入（刷新页面可看到之后加入的人）。"},
	"auth.ws.seen":                 {En: "seen %s", Zh: "%s在线"},
	"auth.ws.notSeen":              {En: "not joined yet", Zh: "尚未加入"},
	"auth.instructorOnly":          {En: "Only the instructor may open this page.", Zh: "只有讲师可以打开此页面。"},
	"auth.ws.print":                {En: "Print this page (Ctrl+P, or ⌘P on a Mac) for a card per participant to hand round.", Zh: "打印本页（Ctrl+P，Mac 上为 ⌘P），每位参与者一张卡片，分发下去。"},
	"auth.ws.writesIn":             {En: "writes in ", Zh: "写入 "},
	"auth.ws.and":                  {En: " and ", Zh: " 和 "},
	"auth.ws.everywhere":           {En: "writes everywhere", Zh: "可在所有地方写入"},
	"auth.ws.kubeconfigOf":         {En: "kubeconfig of %s", Zh: "%s 的 kubeconfig"},
	"auth.ws.qrAlt":                {En: "QR code of the join link of %s", Zh: "%s 的加入链接二维码"},
	"auth.ws.instructor":           {En: "Yours alone: it signs in with every right, so it is left out when the page is printed.", Zh: "仅供你自己使用：它以全部权限登录，因此打印本页时不会包含它。"},
	"auth.role.instructor":         {En: "instructor", Zh: "讲师"},
	"auth.role.participant":        {En: "participant", Zh: "参与者"},
})
