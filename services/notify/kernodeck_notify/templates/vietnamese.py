"""Tiếng Việt (Vietnamese)."""

MESSAGES = {
    # Events
    "order_created": "Đơn hàng {order_id} đã được ghi nhận: {model}, số lô: {lots}, {gpus} GPU, {days} ngày, {total}. Thanh toán tại đây: {url}",
    "order_news": "Đơn hàng {order_id}: {news}\n{url}",
    "news": "{news}\n{url}",
    "payment_instructions": "Thanh toán cho {subject}: hãy gửi đúng {amount} {asset} trên mạng {network} trước {deadline} ({amount_usd}). Địa chỉ và mã QR có trên trang: {url}",
    "payment_instructions_topup": "Nạp {amount_usd}: hãy gửi đúng {amount} {asset} trên mạng {network} trước {deadline}. Địa chỉ và mã QR có trên trang: {url}",
    "payment_news": "Thanh toán cho {subject}: {status} {url}",
    "balance_credited": "Đã cộng {amount} vào số dư của bạn: {reason}. {url}",
    "balance_credited_topup": "Đã xác nhận nạp tiền: {amount} được cộng vào số dư của bạn. {url}",
    "balance_debited": "Đã trả {amount} từ số dư của bạn cho {subject}. {url}",
    # What a payment is for
    "subject_order": "đơn hàng {order_id}",
    "subject_extension": "phần gia hạn của đơn hàng {order_id}",
    "subject_topup": "khoản nạp tiền của bạn",
    # Answers to commands
    "help": 'Thông báo Kernodeck.\n/status: các đơn hàng đang mở của bạn\n/language: en, vi hoặc id\n/unlink: ngừng nhận tin trong cuộc trò chuyện này\n/help: trợ giúp này\nĐể liên kết một cuộc trò chuyện, hãy mở trang tài khoản trên Kernodeck và nhấn "{link_button}".',
    "linked": "Cuộc trò chuyện này đã được liên kết với tài khoản Kernodeck của bạn. Bạn sẽ nhận tin tại đây cho mọi thay đổi về đơn hàng, thanh toán và nạp tiền. /help",
    "already_linked": "Cuộc trò chuyện này đã được liên kết với tài khoản Kernodeck của bạn rồi.",
    "link_used": "Xin lỗi, liên kết này đã được sử dụng. Hãy mở trang tài khoản trên Kernodeck để lấy liên kết mới.",
    "link_expired": "Xin lỗi, liên kết này đã hết hạn. Hãy mở trang tài khoản trên Kernodeck để lấy liên kết mới.",
    "link_unknown": "Xin lỗi, tôi không nhận ra liên kết này. Hãy mở trang tài khoản trên Kernodeck để lấy liên kết mới.",
    "start_without_token": 'Xin chào! Để nhận thông báo Kernodeck tại đây, hãy mở trang tài khoản trên Kernodeck và nhấn "{link_button}".',
    "not_linked": 'Cuộc trò chuyện này chưa được liên kết với tài khoản Kernodeck nào. Hãy mở trang tài khoản trên Kernodeck và nhấn "{link_button}".',
    "unlinked": "Đã hủy liên kết cuộc trò chuyện này: bạn sẽ không nhận tin tại đây nữa. Bạn có thể liên kết lại từ trang tài khoản.",
    "unlinked_by_account": "Cuộc trò chuyện này đã được hủy liên kết từ trang tài khoản Kernodeck: bạn sẽ không nhận tin tại đây nữa.",
    "status_header": "Các đơn hàng đang mở của bạn:",
    "status_line": "{order_id}: {status}\n{url}",
    "status_more": "… và {count} đơn khác.",
    "status_empty": "Bạn không có đơn hàng nào đang mở.",
    "language_set": "Từ giờ tôi sẽ viết bằng tiếng Việt.",
    "language_usage": "Chọn ngôn ngữ cho cuộc trò chuyện này: /language en, /language vi hoặc /language id.",
}
